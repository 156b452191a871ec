-- pi extensions a project brings (its `.pi/extensions/`, its `.pi/settings.json`): code that
-- runs with the user's permissions, loaded only once the user approved it. One answer per
-- extension file (its resolved path): approved (1) or refused (0).
CREATE TABLE extension_trust (
    path       TEXT PRIMARY KEY,
    approved   INTEGER NOT NULL,
    decided_at INTEGER NOT NULL
) STRICT;
