-- Calls a person allowed "always in this project" (an `ask` of the approvals policy): the
-- project's directory, the tool, and for `bash` the command (NULL: any call of the tool).
CREATE TABLE project_approvals (
    project    TEXT NOT NULL,
    tool       TEXT NOT NULL,
    command    TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project, tool, command)
) STRICT;
