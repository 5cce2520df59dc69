// Building the page's elements: text always goes in as text nodes (never parsed as HTML), so nothing
// hangar stores can inject markup.

type Child = Node | string | number | null | undefined | false | Child[]
type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>

/** An element: `on<event>` attributes are listeners, booleans toggle, the rest are attributes. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (value === true) element.setAttribute(name, '')
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value))
  }
  append(element, children)
  return element
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child)
    else if (child instanceof Node) parent.appendChild(child)
    else if (child !== null && child !== undefined && child !== false) parent.appendChild(document.createTextNode(String(child)))
  }
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id)
  if (!element) throw new Error(`the page has no #${id}`)
  return element as T
}

/**
 * Replaces a container's content, keeping what the person was doing: the values typed or chosen in
 * its fields, which `<details>` were open, and the focus (all matched by id).
 */
export function replace(container: HTMLElement, ...children: Child[]): void {
  const values = new Map<string, string>()
  for (const field of container.querySelectorAll<HTMLInputElement | HTMLSelectElement>('input[id], select[id], textarea[id]')) {
    if (field.type !== 'file' && field.dataset.dirty === 'true') values.set(field.id, field.value)
  }
  const open = new Set([...container.querySelectorAll<HTMLDetailsElement>('details[id]')].filter((d) => d.open).map((d) => d.id))
  const focused = container.contains(document.activeElement) ? document.activeElement?.id : undefined
  container.replaceChildren()
  append(container, children)
  for (const [id, value] of values) {
    const field = container.querySelector<HTMLInputElement>(`#${CSS.escape(id)}`)
    if (field) {
      field.value = value
      field.dataset.dirty = 'true'
    }
  }
  for (const id of open) {
    const details = container.querySelector<HTMLDetailsElement>(`#${CSS.escape(id)}`)
    if (details) details.open = true
  }
  if (focused) container.querySelector<HTMLElement>(`#${CSS.escape(focused)}`)?.focus()
}

/** Marks fields the person changed, so that a refresh keeps their value (see `replace`). */
export function trackEdits(root: HTMLElement): void {
  root.addEventListener('input', (event) => {
    const target = event.target as HTMLElement
    if (target.id) target.dataset.dirty = 'true'
  })
}

/** A table with a header row; `caption` names it for screen readers. */
export function table(caption: string, headers: string[], rows: Node[], className = ''): HTMLTableElement {
  return h('table', { class: className },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, headers.map((name) => h('th', { scope: 'col' }, name)))),
    h('tbody', {}, rows))
}

export const empty = (text: string) => h('p', { class: 'empty' }, text)

/** A status as a badge whose colour says how it is going (text says it too). */
export function badge(status: string): HTMLElement {
  const tone = /FAILED|error|INTERRUPTED|interrupted|timeout/.test(status) ? 'bad'
    : /DEPLOYED|success|READY|idle/.test(status) ? 'good'
      : /SKIPPED|UNKNOWN/.test(status) ? 'muted' : 'busy'
  return h('span', { class: `badge ${tone}` }, status)
}

/** Milliseconds as a person reads them: 0.5 s, 42 s, 4 min 10 s, 2 h 5 min. */
export function duration(ms: number): string {
  const s = Math.max(0, ms) / 1000
  if (s < 10) return `${s.toFixed(1)} s`
  if (s < 60) return `${Math.floor(s)} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.floor(s % 60)} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/** The first 8 characters of an id, with the whole id as its title. */
export const shortId = (id: string) => h('code', { title: id }, id.slice(0, 8))

export const pretty = (value: unknown) => JSON.stringify(value, null, 2)
