/** Typed list/read/create/update/delete functions for one REST collection. */
import { http } from './http'

export interface CrudApi<T, In> {
  list(): Promise<T[]>
  get(id: string): Promise<T>
  create(input: In): Promise<T>
  update(id: string, input: In): Promise<T>
  patch(id: string, input: Partial<In>): Promise<T>
  remove(id: string): Promise<void>
}

export function crudApi<T, In>(base: string): CrudApi<T, In> {
  const one = (id: string) => `${base}/${encodeURIComponent(id)}`
  return {
    list: () => http.get<T[]>(base),
    get: (id) => http.get<T>(one(id)),
    create: (input) => http.post<T>(base, input),
    update: (id, input) => http.put<T>(one(id), input),
    patch: (id, input) => http.patch<T>(one(id), input),
    remove: (id) => http.delete(one(id)),
  }
}
