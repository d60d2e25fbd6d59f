"""Looking models up on the Hugging Face Hub (or a mirror): network and cache, outside the
engine. `advisor.hubspec` turns what is read here into the engine's ModelSpec."""
