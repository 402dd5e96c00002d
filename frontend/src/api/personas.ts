/** Personas: character templates with layered truths and affiliations. */
import { crudApi } from './crud'
import type { Persona, PersonaInput } from './types'

export const personasApi = crudApi<Persona, PersonaInput>('/api/personas')
