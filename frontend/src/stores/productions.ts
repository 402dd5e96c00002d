/** Productions list store (the conversation of one production lives in the conversation store). */
import { defineStore } from 'pinia'
import { productionsApi } from '@/api/productions'
import { useCollection } from './collection'

export const useProductionsStore = defineStore('productions', () => useCollection(productionsApi))
