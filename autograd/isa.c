/* isa.c - which SIMD instruction set the kernels run: what the CPU and OS support (cpuid and
 * xgetbv), the VERSUS_ISA environment override and vs_set_kernel_isa(). */
#include "autograd/kernels.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XCR0: which register state the OS saves on context switch.  Bits 1-2: SSE and AVX (YMM upper
 * halves); bits 5-7: AVX-512 opmask, ZMM0-15 upper halves, ZMM16-31. */
static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static vs_isa detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return VS_ISA_SCALAR;
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28), fma = c & (1u << 12);
    if (!osxsave || !avx || !fma) return VS_ISA_SCALAR;
    const uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) return VS_ISA_SCALAR;
    if (__get_cpuid_max(0, NULL) < 7) return VS_ISA_SCALAR;
    __cpuid_count(7, 0, a, b, c, d);
    const bool avx2 = b & (1u << 5), avx512f = b & (1u << 16);
    if (!avx2) return VS_ISA_SCALAR;
    if (avx512f && (xcr0 & 0xe6) == 0xe6) return VS_ISA_AVX512;
    return VS_ISA_AVX2;
}

/* AMD family 0x19 (Zen 3 and Zen 4; only Zen 4 has AVX-512) splits each 512-bit operation into two
 * 256-bit halves; family 0x1A (Zen 5) and Intel's AVX-512 cores run them at full width. */
static bool detect_split(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return false;
    const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "AuthenticAMD" */
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return false;
    unsigned family = (a >> 8) & 0xf;
    if (family == 0xf) family += (a >> 20) & 0xff;
    return family == 0x19;
}
#else
static vs_isa detect(void) { return VS_ISA_SCALAR; }
static bool detect_split(void) { return false; }
#endif

static atomic_int cpu_isa = -1;    /* -1: not detected yet */
static atomic_int forced_isa = -1; /* -1: not decided yet (environment not read) */

vs_isa vs_cpu_isa(void)
{
    int isa = atomic_load(&cpu_isa);
    if (isa < 0) {
        isa = detect();
        atomic_store(&cpu_isa, isa);
    }
    return (vs_isa)isa;
}

static vs_isa lower_to_cpu(vs_isa isa)
{
    vs_isa best = vs_cpu_isa();
    return isa == VS_ISA_AUTO || isa > best ? best : isa;
}

static vs_isa isa_from_env(void)
{
    const char *env = getenv("VERSUS_ISA");
    if (!env) return VS_ISA_AUTO;
    for (int i = VS_ISA_SCALAR; i <= VS_ISA_AVX512; i++)
        if (strcmp(env, vs_isa_name((vs_isa)i)) == 0) return (vs_isa)i;
    return VS_ISA_AUTO;
}

vs_isa vs_kernel_isa(void)
{
    int isa = atomic_load(&forced_isa);
    if (isa < 0) {
        isa = lower_to_cpu(isa_from_env());
        atomic_store(&forced_isa, isa);
    }
    return (vs_isa)isa;
}

vs_isa vs_set_kernel_isa(vs_isa isa)
{
    vs_isa now = lower_to_cpu(isa == VS_ISA_AUTO ? isa_from_env() : isa);
    atomic_store(&forced_isa, now);
    return now;
}

static atomic_int cpu_split = -1, forced_split = -1; /* -1: not decided yet */

static bool cpu_avx512_split(void)
{
    int split = atomic_load(&cpu_split);
    if (split < 0) {
        split = detect_split();
        atomic_store(&cpu_split, split);
    }
    return split;
}

bool vs_avx512_split(void)
{
    const int split = atomic_load(&forced_split);
    return split < 0 ? cpu_avx512_split() : split;
}

bool vs_avx512_full_width(void) { return vs_kernel_isa() == VS_ISA_AVX512 && !vs_avx512_split(); }

bool vs_set_avx512_split(int split)
{
    atomic_store(&forced_split, split < 0 ? -1 : split > 0);
    return vs_avx512_split();
}

const char *vs_isa_name(vs_isa isa)
{
    switch (isa) {
    case VS_ISA_SCALAR: return "scalar";
    case VS_ISA_AVX2: return "avx2";
    case VS_ISA_AVX512: return "avx512";
    case VS_ISA_AUTO: break;
    }
    return "auto";
}
