"""What every part of the engine shares: the errors a user is shown (each with its exit code), text, progress and
cancelling, fault injection points, small-file reading, the home folder and durable file writes."""
