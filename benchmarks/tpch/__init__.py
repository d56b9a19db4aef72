"""TPC-H on Quiver and its peers: data generation, the 22 queries in SQL and in the DataFrame API."""
