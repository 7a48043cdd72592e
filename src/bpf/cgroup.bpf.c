/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: cgroup cpu.weight as a nice offset.
 * Included by main.bpf.c, after its globals and maps.
 *
 * Each cgroup's own offset is the nice the kernel shows in its
 * cpu.weight.nice (policy.h: soryu_cgroup_nice()); a task's offset is the
 * sum over its cgroup and every ancestor below the root, so nested weights
 * multiply. The offset is added to the task's own nice before the level
 * formula, with the same clamp to -20..19: a cgroup's weight is worth what
 * the same nice would be, strict priority included.
 *
 * A weight change anywhere bumps cg_gen; each task keeps the offset it last
 * computed with the generation it was computed at, and recomputes it (a
 * walk up its cgroup's ancestors) the next time it is queued, starts to run
 * or takes a tick under another generation. A move to another cgroup
 * recomputes at once. Either way the new level counts from the task's next
 * slice end at the latest, where dispatch weighs it against the queue. Ordering: set_weight stores the cgroup's nice before it bumps
 * cg_gen (an atomic add, a full barrier); a reader loads cg_gen, then the
 * nices. x86 does not reorder loads with loads, so a reader that sees the
 * new generation sees the new nice. On a weakly ordered machine a reader
 * could pair the new generation with the old nice and keep that offset
 * until the next weight change or move: a stale priority, never a fault.
 */

/* cgroup weights are ignored under --no-cgroup-weight */
const volatile bool cgroup_weight_on = true;

struct cgrp_ctx {
	s32 nice;	/* soryu_cgroup_nice() of the cgroup's cpu.weight */
};

struct {
	__uint(type, BPF_MAP_TYPE_CGRP_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cgrp_ctx);
} cgrp_ctxs SEC(".maps");

/* starts at 1: a task context's 0 means "never computed" */
u64 cg_gen = 1;

/* The sum of the cgroup nices from @cgrp up to the root (excluded). */
static s32 cgroup_offset(struct cgroup *cgrp)
{
	s32 sum = 0;
	int lvl, depth = cgrp->level;

	bpf_for(lvl, 1, depth + 1) {
		struct cgroup *anc;
		struct cgrp_ctx *c;

		if (lvl > SORYU_CGROUP_MAX_DEPTH)
			break;
		if (!(anc = bpf_cgroup_ancestor(cgrp, lvl)))
			break;
		if ((c = bpf_cgrp_storage_get(&cgrp_ctxs, anc, 0, 0)))
			sum = soryu_cgroup_nice_sum(sum, c->nice);
		bpf_cgroup_release(anc);
	}
	return sum;
}

/*
 * Brings @p's cgroup offset up to date. @p must be the task the current
 * callback operates on, with its rq locked (scx_bpf_task_cgroup()'s rule):
 * ops.enqueue and ops.running.
 */
static void refresh_cgroup_nice(struct task_struct *p, struct soryu_task_ctx *tctx)
{
	struct cgroup *cgrp;
	u64 gen;

	if (!cgroup_weight_on)
		return;
	gen = READ_ONCE(cg_gen);
	if (tctx->cg_gen == gen)
		return;
	if (!(cgrp = scx_bpf_task_cgroup(p)))
		return;
	tctx->cg_nice = cgroup_offset(cgrp);
	tctx->cg_gen = gen;
	bpf_cgroup_release(cgrp);
}

static void set_cgroup_weight(struct cgroup *cgrp, u32 weight)
{
	struct cgrp_ctx *c;

	c = bpf_cgrp_storage_get(&cgrp_ctxs, cgrp, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return;	/* no memory: the cgroup counts as weight 100 */
	c->nice = soryu_cgroup_nice(weight);
	__sync_fetch_and_add(&cg_gen, 1);
}

/*
 * Never fails: a cgroup soryu could not track counts as weight 100, where
 * an error would make the kernel refuse to create the cgroup.
 */
s32 BPF_STRUCT_OPS(soryu_cgroup_init, struct cgroup *cgrp, struct scx_cgroup_init_args *args)
{
	set_cgroup_weight(cgrp, args->weight);
	return 0;
}

void BPF_STRUCT_OPS(soryu_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	set_cgroup_weight(cgrp, weight);
}

/* A move takes effect at the task's next enqueue: within its slice. */
void BPF_STRUCT_OPS(soryu_cgroup_move, struct task_struct *p,
		    struct cgroup *from, struct cgroup *to)
{
	struct soryu_task_ctx *tctx;

	if (!cgroup_weight_on || !(tctx = lookup_task_ctx(p)))
		return;
	tctx->cg_nice = cgroup_offset(to);
	tctx->cg_gen = READ_ONCE(cg_gen);
}

/*
 * A task that keeps its CPU (nothing at least as good is queued when its
 * slice ends) is neither queued nor switched in again: the tick brings its
 * offset up to date, so that the next slice end weighs it at its new level.
 */
void BPF_STRUCT_OPS(soryu_tick, struct task_struct *p)
{
	struct soryu_task_ctx *tctx;

	if (cgroup_weight_on && (tctx = lookup_task_ctx(p)))
		refresh_cgroup_nice(p, tctx);
}
