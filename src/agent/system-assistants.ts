import { v5 as uuid5 } from 'uuid'
import type { AssistantRepository } from '../store/assistants.js'
import type { GraphEngine } from './types.js'

/** The namespace the real server derives system-assistant ids from (note: 8**2**1, FACTS.md). */
const NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8'

/** A graph's system assistant id: `chat` → `eb6db400-e3c8-5d06-a834-015cb89efe69`. */
export const systemAssistantId = (graphId: string): string => SystemAssistantIds.of(graphId)

/** The ids already derived in this process (a test suite seeds every graph's, in every app it starts). */
class SystemAssistantIds {
  static readonly #ids = new Map<string, string>()

  static of(graphId: string): string {
    let id = SystemAssistantIds.#ids.get(graphId)
    if (id === undefined) SystemAssistantIds.#ids.set(graphId, id = uuid5(graphId, NAMESPACE))
    return id
  }
}

/** An `assistant_id` as clients send it: a graph's name stands for its system assistant. */
export function resolveAssistantId(engine: GraphEngine, idOrGraph: string): string {
  return engine.has(idOrGraph) ? systemAssistantId(idOrGraph) : idOrGraph.toLowerCase()
}

/** Creates each graph's system assistant in a scope, keeping any that already exist. */
export function seedSystemAssistants(assistants: AssistantRepository, engine: GraphEngine, scope: string): void {
  for (const graphId of engine.graphIds()) {
    const id = systemAssistantId(graphId)
    if (assistants.get(scope, id)) continue
    assistants.create(scope, id, {
      graph_id: graphId,
      name: graphId,
      description: null,
      config: {},
      context: {},
      metadata: { created_by: 'system' },
    })
  }
}
