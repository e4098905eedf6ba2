"""The measured report of the Unload Text Encoders node (`report`)."""
