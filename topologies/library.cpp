// Placeholder translation unit so the library target exists before its sources do.
