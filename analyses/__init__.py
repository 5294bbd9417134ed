"""The reviewer questions, each composed from psychometrics over a responses table."""
