// A recorded graph's public description: the drawing and schemas the upstream answered with when
// it was recorded (`GET /assistants/{id}/graph`, `/schemas`); a recording made without them shows
// an empty drawing and open schemas. Recorded graphs list no subgraphs and have no x-ray levels.

import type { ReplayFile } from './replay-file.js'
import type { GraphInfo } from './types.js'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

export function replayInfo(replay: ReplayFile): GraphInfo {
  const open = () => ({ $schema: DRAFT, type: 'object', properties: {} })
  return {
    graph_id: replay.graph_id,
    description: replay.description,
    drawable: replay.graph ? structuredClone(replay.graph) : { nodes: [], edges: [] },
    xray: [],
    schemas: replay.schemas ? { ...structuredClone(replay.schemas), graph_id: replay.graph_id }
      : { graph_id: replay.graph_id, input_schema: open(), output_schema: open(), state_schema: open(), config_schema: open(), context_schema: open() },
    subgraphs: [],
  }
}
