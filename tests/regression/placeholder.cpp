// Cases for tests/regression are added by the issues that build the models they exercise.
