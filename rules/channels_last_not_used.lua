-- rules/channels_last_not_used.lua — channels-last-not-used
--
-- What: a convolutional network runs Tensor Core convolutions on NCHW (channels-first) tensors,
-- so cuDNN transposes activations to NHWC and back around them (nchwToNhwc / nhwcToNchw kernels).
-- Why: Tensor Core convolutions work in NHWC. With torch.channels_last the model keeps that layout
-- end to end: the transposes disappear and cuDNN can pick faster kernels.
return {
  id = "channels-last-not-used",
  title = "Tensor Core convolutions run on NCHW tensors (channels_last not used)",
  doc = [[
On each GPU with Tensor Core convolution kernels, sums the layout-transpose kernels
(nchwToNhwc, nhwcToNchw) that cuDNN adds around them. Reports when they are at least
`min_conv_share` of the convolution time. The estimate is the transpose time itself (it
disappears with channels_last); the faster NHWC kernels are not counted.]],
  needs = { "kernels" },
  options = {
    min_conv_share = { default = 0.01, doc = "report when transposes take this share of convolution kernel time" },
    min_wall_share = { default = 0.002, doc = "and when the estimate is at least this share of wall time" },
  },

  evaluate = function(ctx)
    local o = ctx.options
    for _, dev in ipairs(ctx.summary.devices) do
      -- Base table only. Convolution time is one scan; the transposes are found by name once, among
      -- the distinct kernel names (not the whole string table: nsys stores hold ~10^6 range names),
      -- and read through the kernel_by_name index: no per-kernel LIKE.
      local r = ctx:query([[
        SELECT a.conv_ns, a.conv_tc_ns, b.transpose_ns, b.transposes, b.first, b.last
        FROM (SELECT coalesce(sum(CASE WHEN category = 'conv' THEN dur_ns END), 0) AS conv_ns,
                     coalesce(sum(CASE WHEN category = 'conv' AND is_tensor_core = 1 THEN dur_ns END), 0) AS conv_tc_ns
              FROM _kernel WHERE trace_id = ? AND device_id IS ?) a,
             (SELECT coalesce(sum(dur_ns), 0) AS transpose_ns, count(*) AS transposes,
                     min(iteration) AS first, max(iteration) AS last
              FROM _kernel
              WHERE +trace_id = ? AND +device_id IS ?
                AND name_id IN (SELECT n.name_id FROM (SELECT DISTINCT name_id FROM _kernel) n
                                JOIN string s ON s.id = n.name_id
                                WHERE s.value LIKE '%nchwToNhwc%' OR s.value LIKE '%nhwcToNchw%')) b]],
        ctx.trace_id, dev.device_id, ctx.trace_id, dev.device_id)[1]
      local share = r.conv_ns > 0 and r.transpose_ns / r.conv_ns or 0
      if r.conv_tc_ns > 0 and r.transposes > 0 and share >= o.min_conv_share
          and r.transpose_ns >= o.min_wall_share * ctx.summary.wall_ns then
        local gpu = dev.name and string.format("GPU %d (%s)", dev.device_id, dev.name) or ("GPU " .. dev.device_id)
        ctx:report{
          problem = string.format(
            "On %s, %d layout transposes (nchwToNhwc/nhwcToNchw) took %s, %s of the %s of convolution kernel time: " ..
            "the Tensor Core convolutions (%s) run in NHWC while the model's tensors are NCHW.",
            gpu, r.transposes, proflint.format_ns(r.transpose_ns), proflint.format_percent(share),
            proflint.format_ns(r.conv_ns), proflint.format_ns(r.conv_tc_ns)),
          recommendation =
            "Use the channels_last memory format: model = model.to(memory_format=torch.channels_last) and " ..
            "images = images.to(device, memory_format=torch.channels_last, non_blocking=True), with autocast as " ..
            "now. TensorFlow/Keras uses NHWC (channels_last) by default: keep data_format='channels_last'.",
          estimated_savings_ns = r.transpose_ns,
          savings_method = "GPU time of the NCHW<->NHWC transpose kernels, which channels_last removes",
          confidence = 0.6,
          evidence = {
            device_id = dev.device_id,
            transposes = r.transposes,
            transpose_ns = r.transpose_ns,
            conv_ns = r.conv_ns,
            conv_tensor_core_ns = r.conv_tc_ns,
            share_of_conv_time = share,
          },
          scope = { device_id = dev.device_id, iter_first = r.first, iter_last = r.last },
        }
      end
    end
  end,
}
