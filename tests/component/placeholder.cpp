// Cases for tests/component are added by the issues that build the models they exercise.
