"""Physical planning: the physical operators, and the planner that maps logical nodes to them."""
