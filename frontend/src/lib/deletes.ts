/** What a delete confirmation says goes with an object (the server refuses while a production or frame uses it). */

/** “A”, “B” and “C”. */
export function quotedList(names: string[]): string {
  const quoted = names.map((n) => `“${n}”`)
  return quoted.length < 2 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`
}

/**
 * The confirmation text: the object, then each kind of thing deleted or changed with it.
 *
 * @param along e.g. `{ what: 'its assistant', names: ['Ada on GPT'], verb: 'is deleted too' }`,
 *   pluralised when several.
 */
export function deleteWarning(
  name: string,
  along: { one: string; many: string; names: string[]; verb: [string, string] }[] = [],
): string {
  const parts = along
    .filter((a) => a.names.length)
    .map((a) => {
      const several = a.names.length > 1
      return `${several ? a.many : a.one} ${quotedList(a.names)} ${several ? a.verb[1] : a.verb[0]}`
    })
  const tail = parts.length ? ` ${parts.map((p) => `${p.charAt(0).toUpperCase()}${p.slice(1)}.`).join(' ')}` : ''
  return `“${name}” will be deleted.${tail} This cannot be undone.`
}
