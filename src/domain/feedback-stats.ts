// A run's `feedback_stats`, per feedback key: the v1 form (`RunSchema`) and the v2 form (the v2
// API's `Run.FeedbackStats`), which differ in their deviation and in what else they report.

import type { Feedback } from '../store/feedback.js'

const numericScores = (list: Feedback[]) =>
  list.map((f) => (typeof f.score === 'boolean' ? Number(f.score) : f.score)).filter((s): s is number => typeof s === 'number')

function byKey(records: Feedback[]): [string, Feedback[]][] {
  const map = new Map<string, Feedback[]>()
  for (const record of records) map.set(record.key, [...(map.get(record.key) ?? []), record])
  return [...map]
}

function valueCounts(list: Feedback[]): Record<string, number> {
  const values: Record<string, number> = {}
  for (const f of list) if (f.value !== null && typeof f.value !== 'object') values[String(f.value)] = (values[String(f.value)] ?? 0) + 1
  return values
}

const mean = (scores: number[]) => (scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : undefined)

/** v1: per key, count, mean and (population) deviation of numeric scores, and counts of values. */
export function feedbackStats(records: Feedback[]) {
  return Object.fromEntries(byKey(records).map(([key, list]) => {
    const scores = numericScores(list)
    const avg = mean(scores) ?? null
    const stdev = avg === null ? null : Math.sqrt(scores.reduce((a, s) => a + (s - avg) ** 2, 0) / scores.length)
    return [key, { n: list.length, avg, stdev, errors: 0, values: valueCounts(list) }]
  }))
}

/** v2: as its documentation says — `stdev` the sample deviation (left out below two scores), `min`, `max`, comments and sources. */
export function feedbackStatsV2(records: Feedback[]) {
  return Object.fromEntries(byKey(records).map(([key, list]) => {
    const scores = numericScores(list)
    const avg = mean(scores)
    const stdev = avg === undefined || scores.length < 2 ? undefined : Math.sqrt(scores.reduce((a, s) => a + (s - avg) ** 2, 0) / (scores.length - 1))
    return [key, {
      n: list.length,
      avg,
      stdev,
      min: scores.length ? Math.min(...scores) : undefined,
      max: scores.length ? Math.max(...scores) : undefined,
      errors: 0,
      values: valueCounts(list),
      comments: list.map((f) => f.comment).filter((c): c is string => c !== null),
      sources: [...new Set(list.map((f) => f.feedback_source?.type).filter((s): s is string => typeof s === 'string'))],
      contains_thread_feedback: false,
    }]
  }))
}
