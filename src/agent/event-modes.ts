// Which stream mode a logged run event belongs to, so that a join stream asked for some modes
// (`GET …/runs/{run_id}/stream?stream_mode=updates`) sends only theirs. Events that belong to no
// mode (`metadata` first, `error`, `feedback` and `end` last) say where the run is and how it
// ended: they always go out.

/** The mode an event name comes from, or null for the run's own events. */
export function modeOfEvent(event: string): string | null {
  const name = event.split('|')[0] // `updates|node:task` with stream_subgraphs
  if (name === 'messages') return 'messages-tuple'
  if (name.startsWith('messages/')) return 'messages'
  if (['metadata', 'error', 'feedback', 'end'].includes(name)) return null
  return name
}

/** Whether a join stream that asked for `modes` (none: every mode) sends this event. */
export function joinSends(event: string, modes: readonly string[] | undefined): boolean {
  if (!modes?.length) return true
  const mode = modeOfEvent(event)
  return mode === null || modes.includes(mode)
}
