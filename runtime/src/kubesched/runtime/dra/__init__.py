"""Dynamic resource allocation: CEL device selectors (:mod:`.cel`) and the structured allocator (:mod:`.allocator`)."""
