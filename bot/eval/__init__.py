"""`bullpen eval`: a fixed question set over the offline snapshot, scored by code."""
