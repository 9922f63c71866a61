/* train_progress.c - the training progress (epoch, step, every loss term, rate, ETA): a bar redrawn in place
 * on a terminal, and elsewhere (nohup, Slurm, a pipe) one line every VERSUS_PROGRESS_SECONDS seconds (default
 * 30); the epoch lines go to both.  Also the monotonic clock the loop measures time with. */
#include "nn/train_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BAR_WIDTH 20
#define REDRAW_SECONDS 0.1

double vs_train_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "1:02:03" or "2:05" */
static void format_duration(double s, char *buf, size_t n)
{
    if (!isfinite(s) || s < 0) {
        snprintf(buf, n, "?");
        return;
    }
    long long t = (long long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%lld:%02lld:%02lld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%lld:%02lld", t / 60, t % 60);
}

void vs_train_progress_format(const vs_train_progress *p, char *buf, size_t n)
{
    char bar[BAR_WIDTH + 1], eta[32], terms[160] = "";
    int64_t filled = p->steps > 0 ? p->step * BAR_WIDTH / p->steps : 0;
    for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = '\0';
    int64_t left = (p->epochs - p->epoch) * p->steps + (p->steps - p->step);
    format_duration(p->rate > 0 ? (double)left / p->rate : NAN, eta, sizeof eta);
    /* each term the task has computed this epoch ("loss 0.2345" or "d_loss -1.2 g_loss 0.8 gp 0.1") */
    size_t o = 0;
    for (int k = 0; k < p->n_terms && o < sizeof terms; k++)
        if (!isnan(p->term[k])) o += (size_t)snprintf(terms + o, sizeof terms - o, "  %s %.4g", p->terms[k], p->term[k]);
    if (p->n_terms == 0) snprintf(terms, sizeof terms, "  loss %.4f", p->loss);
    snprintf(buf, n, "epoch %lld/%lld [%s] step %lld/%lld%s  %.1f steps/s  ETA %s", (long long)p->epoch, (long long)p->epochs, bar,
             (long long)p->step, (long long)p->steps, terms, p->rate, eta);
}

/* Seconds between log lines when the output is not a terminal: VERSUS_PROGRESS_SECONDS, default 30. */
static double log_seconds(void)
{
    const char *e = getenv("VERSUS_PROGRESS_SECONDS");
    char *end;
    double v = e && *e ? strtod(e, &end) : NAN;
    return e && *e && !*end && v >= 0 && v < 1e9 ? v : 30.0;
}

void vs_progress_bar_init(vs_progress_bar *b, FILE *f)
{
    memset(b, 0, sizeof *b);
    b->f = f;
    b->tty = f && isatty(fileno(f));
    b->every = b->tty ? REDRAW_SECONDS : log_seconds();
    b->last = f ? vs_train_now() : -1;
    if (b->tty) b->last = -1; /* a terminal gets the bar at once */
}

void vs_progress_bar_update(vs_progress_bar *b, const vs_train_progress *p, bool force)
{
    if (!b->f) return;
    double now = vs_train_now();
    if (b->tty ? !force && b->last >= 0 && now - b->last < b->every : now - b->last < b->every) return;
    char line[256];
    vs_train_progress_format(p, line, sizeof line);
    if (b->tty)
        fprintf(b->f, "\r%s\033[K", line);
    else
        fprintf(b->f, "%s\n", line);
    fflush(b->f);
    b->last = now;
    b->drawn = b->tty;
}

void vs_progress_bar_done(vs_progress_bar *b)
{
    if (!b->f || !b->drawn) return;
    fputs("\r\033[K", b->f);
    fflush(b->f);
    b->drawn = false;
}

void vs_progress_bar_line(vs_progress_bar *b, const char *line)
{
    if (!b->f) return;
    vs_progress_bar_done(b);
    fprintf(b->f, "%s\n", line);
    fflush(b->f);
}
