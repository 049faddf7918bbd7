// Following a revision's log by reading it again (GET .../revisions/{id}/logs answers the whole
// log so far): what is new since the last read, and whether a revision's status is final. Pure:
// no DOM, so `node --test` checks it.

/** The revision statuses after which its build and rollout write nothing more. */
export const finalStatuses = new Set(["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED", "SKIPPED", "INTERRUPTED"]);

/** isFinal reports whether a revision in status has finished building and rolling out. */
export function isFinal(status: string): boolean {
  return finalStatuses.has(status);
}

/**
 * logDelta compares the log read before with the one read now: the text to append, or, when the
 * log is not a continuation (its head was cut to keep the last part of a long step), reset with
 * the whole text.
 */
export function logDelta(before: string, now: string): { reset: boolean; text: string } {
  if (now.startsWith(before)) return { reset: false, text: now.slice(before.length) };
  return { reset: true, text: now };
}
