/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * scx_soryu: what the kernel's debug dump shows of soryu when it ejects the
 * scheduler (a stall, a BPF error) or on SysRq-D. The kernel prints the
 * dump to its log and hands it to the daemon (--exit-dump-len), which
 * prints it on an error exit. Included by main.bpf.c; reads its state and
 * changes nothing.
 *
 *   soryu: vtime_now=... starve_ms=... slice_us=...
 *   soryu: llc L lvl_bitmap=0x... starving=0x... levels_running 0x...
 *   soryu: llc L level V queued N last_served -Tms  (levels that hold tasks)
 *   soryu: cpu C level L grant_pid P own_queue N    (per CPU)
 *   soryu: task boost B level L waited Tms ...      (per runnable task)
 */

/* Milliseconds since @t, 0 for "never". */
static u64 ms_since(u64 now, u64 t)
{
	return t && time_after(now, t) ? (now - t) / 1000000 : 0;
}

void BPF_STRUCT_OPS(soryu_dump, struct scx_dump_ctx *dctx)
{
	u64 now = scx_bpf_now();
	struct llc_queues *q;
	struct llc_ctx *lc;
	u32 lvl, llc;
	s32 n;

	scx_bpf_dump("soryu: vtime_now=%llu starve_ms=%llu slice_us=%llu\n",
		     READ_ONCE(vtime_now), starve_ns / 1000000, slice_ns / 1000);
	bpf_for(llc, 0, llc_count()) {
		if (!(q = queues_of(llc)) || !(lc = bpf_map_lookup_elem(&llc_ctxs, &llc)))
			continue;
		scx_bpf_dump("soryu: llc %u lvl_bitmap=0x%llx starving=0x%llx levels_running 0x%llx\n",
			     llc, READ_ONCE(q->bitmap), READ_ONCE(q->starving),
			     READ_ONCE(lc->running));
		bpf_for(lvl, 0, SORYU_NR_LEVELS) {
			n = scx_bpf_dsq_nr_queued(LEVEL_DSQ(llc, lvl));
			if (n > 0)
				scx_bpf_dump("soryu: llc %u level %u queued %d last_served %llums ago\n",
					     llc, lvl, n,
					     ms_since(now, READ_ONCE(*QV(q->last_served, lvl))));
		}
	}
}

void BPF_STRUCT_OPS(soryu_dump_cpu, struct scx_dump_ctx *dctx, s32 cpu, bool idle)
{
	u32 zero = 0;
	struct cpu_ctx *cctx = bpf_map_lookup_percpu_elem(&cpu_ctxs, &zero, cpu);

	if (!cctx || idle)
		return;
	scx_bpf_dump("soryu: cpu %d level %u grant_pid %d own_queue %d\n", cpu, cctx->level,
		     cctx->grant_pid, scx_bpf_dsq_nr_queued(SORYU_PIN_DSQ + cpu));
}

void BPF_STRUCT_OPS(soryu_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	struct soryu_task_ctx *tctx = lookup_task_ctx(p);
	u64 now = scx_bpf_now();

	if (!tctx)
		return;
	/* the first 64 CPUs of the mask; n counts them all */
	scx_bpf_dump("soryu: task boost %d level %u queued_level %u waited %llums used_us %llu granted %d cpus 0x%llx n %d\n",
		     tctx->boost, task_level(p, tctx), tctx->enq_level,
		     ms_since(now, tctx->queued_at), tctx->used_ns / 1000,
		     tctx->granted, (u64)p->cpus_ptr->bits[0], p->nr_cpus_allowed);
}
