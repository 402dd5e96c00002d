/** Test data builders shared by the specs. */
import type { Affiliation, Assistant, CastMember, Model, Persona, ProductionDetail, Turn } from '@/api/types'

const STAMP = { created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' }

export function makeTurn(over: Partial<Turn> & { id: string }): Turn {
  return {
    parent: null,
    depth: 0,
    speaker_kind: 'assistant',
    assistant: 'as1',
    speaker_name: 'Alice',
    avatar_url: '',
    content: '',
    token_count: 0,
    status: 'done',
    error: '',
    model_id: 'offline-narrator',
    prompt_tokens: null,
    completion_tokens: null,
    latency_ms: null,
    created_at: '2025-01-01T00:00:00Z',
    ...over,
  }
}

export function makeModel(over: Partial<Model> & { id: string }): Model {
  return {
    name: 'GPT-4o',
    provider: 'openai',
    api_endpoint: 'https://api.openai.com/v1',
    has_api_key: true,
    model_id: 'gpt-4o',
    config: {},
    is_default: false,
    ...STAMP,
    ...over,
  }
}

export function makeAffiliation(over: Partial<Affiliation> & { id: string; name: string }): Affiliation {
  return { universal_truth: '', internal_truth: '', external_truth: '', ...STAMP, ...over }
}

export function makePersona(over: Partial<Persona> & { id: string; name: string }): Persona {
  return {
    avatar_url: '',
    style: '',
    universal_truth: '',
    internal_truth: '',
    external_truth: '',
    known_as: '',
    affiliations: [],
    covert_affiliations: [],
    ...STAMP,
    ...over,
  }
}

export function makeAssistant(over: Partial<Assistant> & { id: string; display_name: string }): Assistant {
  return {
    persona: 'p1',
    model: 'm1',
    name: '',
    config_override: {},
    persona_name: over.display_name,
    avatar_url: '',
    model_name: 'Offline Narrator',
    ...STAMP,
    ...over,
  }
}

export function makeCast(id: string, name: string): CastMember {
  return { id, display_name: name, persona_name: name, avatar_url: '', model_name: 'Offline Narrator', model_id: 'narrator', provider: 'offline' }
}

export function makeDetail(over: Partial<ProductionDetail> = {}): ProductionDetail {
  return {
    id: 'prod1',
    name: 'Therapy Session',
    world: 'w1',
    scenario: 's1',
    world_name: 'Modern NYC',
    scenario_name: 'First Therapy Session',
    assistants: ['as1', 'as2'],
    show_directive: false,
    turn_count: 0,
    cast: [makeCast('as1', 'Alice'), makeCast('as2', 'Bob')],
    turns: [],
    head: null,
    autoplay_remaining: 0,
    event_seq: 0,
    ...STAMP,
    ...over,
  }
}
