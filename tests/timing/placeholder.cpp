// Cases for tests/timing are added by the issues that build the models they exercise.
