/** Affiliations: groups with universal, internal and external truths. */
import { crudApi } from './crud'
import type { Affiliation, AffiliationInput } from './types'

export const affiliationsApi = crudApi<Affiliation, AffiliationInput>('/api/affiliations')
