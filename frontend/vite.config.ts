/// <reference types="vitest/config" />
// Vite config: the SPA is served by Django under /static/; dev proxies the API and sockets.
import { fileURLToPath, URL } from 'node:url'
import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

const backend = process.env.LMIX_BACKEND ?? 'http://127.0.0.1:8000'

// Built files live under /static/ (Django); the dev server serves the app at / so that
// history-mode deep links work there too.
export default defineConfig(({ command }) => ({
  base: command === 'build' ? '/static/' : '/',
  plugins: [vue()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
  server: {
    port: 5173,
    proxy: {
      '/api': { target: backend, changeOrigin: false },
      '/ws': { target: backend, ws: true, changeOrigin: false },
      '/admin': { target: backend, changeOrigin: false },
      '/media': { target: backend, changeOrigin: false },
      '/static/admin': { target: backend, changeOrigin: false },
    },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.spec.ts'],
    restoreMocks: true,
  },
}))
