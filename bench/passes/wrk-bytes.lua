-- wrk prints bytes read only rounded (e.g. "3.21MB read"); this prints the exact count.
done = function(summary, latency, requests)
  io.write(string.format("bytes_read: %d\n", summary.bytes))
end
