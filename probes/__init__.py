"""What is asked and what came back: stimuli, templates, backends, parsing, collection and the store."""
