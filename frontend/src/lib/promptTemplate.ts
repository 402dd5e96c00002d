/** The system prompt template's placeholders, checked as the server does (productions/prompt_template.py). */

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g
const ENFORCED = ['knowledge', 'lore']

/** What is wrong with a template (empty when it is fine); `known` are the placeholder names. */
export function templateProblems(text: string, known: readonly string[]): string[] {
  const names = [...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? '')
  const unknown = [...new Set(names.filter((n) => !known.includes(n.toLowerCase())))].sort()
  const problems: string[] = []
  if (unknown.length)
    problems.push(`Unknown placeholder${unknown.length > 1 ? 's' : ''}: ${unknown.map((n) => `{{${n}}}`).join(', ')}.`)
  for (const name of ENFORCED)
    if (names.filter((n) => n.toLowerCase() === name).length > 1) problems.push(`{{${name}}} may appear only once.`)
  return problems
}

/** Whether the template places the knowledge itself (else it is added at the end). */
export const placesKnowledge = (text: string) => /\{\{\s*knowledge\s*\}\}/i.test(text)
