/** What the assistant and model forms offer: sampler presets, the default system prompt template. */
import { http } from './http'
import type { PromptControls } from './types'

export const getPromptControls = () => http.get<PromptControls>('/api/prompt-controls')
