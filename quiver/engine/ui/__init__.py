"""What a person sees: result tables, plan pictures, live progress and job reports."""
