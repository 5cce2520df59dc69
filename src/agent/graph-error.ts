// An error a graph raises while it runs (a failing node, a reducer that refuses an update): it
// carries the Python exception name the wire reports (`{"error": name, "message": message}`).

export class GraphError extends Error {
  constructor(name: string, message: string) {
    super(message)
    this.name = name
  }

  /** The body of an `error` stream event. */
  toEvent(): { error: string; message: string } {
    return { error: this.name, message: this.message }
  }

  /** The text a failed task's `error` field holds (useStream parses it as JSON). */
  toTaskError(): string {
    return JSON.stringify({ message: this.message, name: this.name })
  }
}
