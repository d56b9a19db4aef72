"""Running a query: the pipeline from analyzed plan to stages, the scheduler, tasks, shuffle, blocks, devices
and runtimes."""
