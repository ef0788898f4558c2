"""Where bots run.  One interface (:mod:`.base`), several backends (see DESIGN.md,
Sandboxes), picked by name in :mod:`.backends`:

- ``docker`` (:mod:`.containers`, images by :mod:`.images`): one container per bot per match;
- ``process`` (:mod:`.process`): each bot a child process confined by bubblewrap, with its
  seat's control groups (:mod:`.cgroups`) and a root holding only what its interpreter
  needs (:mod:`.interpreter_root`);
- ``inproc`` (:mod:`.inproc`): trusted bots as tasks in the referee's own process (tests,
  benchmarks)."""
