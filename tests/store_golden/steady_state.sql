-- fixture: fixtures/startup_dominated.json.gz
-- Start-up detection: a 300 ms context-creating cudaFree at the head of the capture is start-up,
-- and the steady state after it carries its own breakdown. Checked by hand: the raw trace holds
-- one cudaFree of dur 300000 us.
SELECT device_id, start_ns - window_start_ns AS startup_ns, startup_cause, startup_evidence, end_ns - start_ns AS steady_ns,
       kernel_tc_ns, kernel_other_ns, communication_ns, memcpy_ns, memset_ns, runtime_ns, dataloader_ns, cpu_ns, idle_ns
FROM steady_state ORDER BY trace_id, device_id
