# temporary probe, removed by the sandbox-image test
