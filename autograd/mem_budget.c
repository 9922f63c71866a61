/* mem_budget.c - the memory budget: sizes that come from input (file headers, --n, label counts) are
 * checked against it before they are allocated, so a hostile or mistaken input is refused with a
 * message instead of exhausting the machine. */
#include "versus/error.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static _Atomic size_t budget; /* 0 = the default */

/* Half the physical memory (4 GiB when the system does not say). */
static size_t default_budget(void)
{
    long pages = -1, page = -1;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    pages = sysconf(_SC_PHYS_PAGES);
    page = sysconf(_SC_PAGESIZE);
#endif
    size_t bytes;
    if (pages <= 0 || page <= 0 || !vs_size_mul((size_t)pages, (size_t)page, &bytes)) return (size_t)4 << 30;
    return bytes / 2;
}

/* default_budget() of the first call: sysconf(_SC_PHYS_PAGES) is a system call (sysinfo), and every
 * tensor allocation asks for the budget (2.8% of an IG run when it was asked each time). */
static _Atomic size_t half_ram;

size_t vs_mem_budget(void)
{
    size_t b = atomic_load(&budget);
    if (b) return b;
    b = atomic_load(&half_ram);
    if (!b) {
        b = default_budget();
        atomic_store(&half_ram, b);
    }
    return b;
}

void vs_set_mem_budget(size_t bytes) { atomic_store(&budget, bytes); }

const char *vs_mem_size_str(size_t bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) v /= 1024, u++;
    if (u == 0) snprintf(buf, n, "%zu bytes", bytes);
    else snprintf(buf, n, "%.1f %s", v, unit[u]);
    return buf;
}

vs_status vs_mem_check(size_t count, size_t size, const char *what, vs_error *err)
{
    size_t bytes, max = vs_mem_budget();
    char need[32], have[32];
    if (!vs_size_mul(count, size, &bytes))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: %zu x %zu bytes overflow the size type", what, count, size);
    if (bytes <= max) return VS_OK;
    return vs_error_set(err, VS_ERR_NOMEM, "%s: needs %s, more than the memory budget of %s (--max-memory)", what,
                        vs_mem_size_str(bytes, need, sizeof need), vs_mem_size_str(max, have, sizeof have));
}
