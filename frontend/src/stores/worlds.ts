/** Worlds store. */
import { defineStore } from 'pinia'
import { worldsApi } from '@/api/worlds'
import { useCollection } from './collection'

export const useWorldsStore = defineStore('worlds', () => useCollection(worldsApi))
