// The starved-pool tests cap and flood the process-wide thread pool; nothing else may run meanwhile.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
