// Local persistence: the move token of every game this browser created, this browser's
// player (id, name and token), and the player's preferences. Tokens live in localStorage so a reload (or a new tab) keeps
// playing; when localStorage is unavailable, sessionStorage is used instead.

const TOKEN_PREFIX = "minesweeper.token.";
const PREFS_KEY = "minesweeper.prefs";
const LAST_KEY = "minesweeper.last";
// Games expire on the server after a week of inactivity; keep tokens a little longer.
const TOKEN_MAX_AGE_MS = 8 * 24 * 3600 * 1000;
const MAX_TOKENS = 200;

function pickStorage() {
  for (const name of ["localStorage", "sessionStorage"]) {
    try {
      const s = window[name];
      const probe = "minesweeper.probe";
      s.setItem(probe, "1");
      s.removeItem(probe);
      return s;
    } catch {
      // Storage disabled (private mode, policy): try the next one.
    }
  }
  const memory = new Map();
  return {
    getItem: (k) => (memory.has(k) ? memory.get(k) : null),
    setItem: (k, v) => memory.set(k, String(v)),
    removeItem: (k) => memory.delete(k),
    key: (i) => [...memory.keys()][i] ?? null,
    get length() { return memory.size; },
  };
}

const storage = pickStorage();

function readJson(key) {
  try {
    const raw = storage.getItem(key);
    return raw == null ? null : JSON.parse(raw);
  } catch {
    return null;
  }
}

function writeJson(key, value) {
  try {
    storage.setItem(key, JSON.stringify(value));
  } catch {
    // Quota exceeded: losing a preference is not worth an error.
  }
}

export const tokens = {
  get(id) {
    const entry = readJson(TOKEN_PREFIX + id);
    if (!entry) return null;
    return typeof entry === "string" ? entry : entry.token ?? null;
  },
  set(id, token) {
    writeJson(TOKEN_PREFIX + id, { token, saved: Date.now() });
    this.prune();
  },
  forget(id) {
    storage.removeItem(TOKEN_PREFIX + id);
  },
  prune() {
    const entries = [];
    for (let i = 0; i < storage.length; i++) {
      const key = storage.key(i);
      if (key && key.startsWith(TOKEN_PREFIX)) {
        const entry = readJson(key);
        entries.push([key, (entry && entry.saved) || 0]);
      }
    }
    const now = Date.now();
    entries.sort((a, b) => b[1] - a[1]);
    entries.forEach(([key, saved], index) => {
      if (index >= MAX_TOKENS || (saved && now - saved > TOKEN_MAX_AGE_MS)) storage.removeItem(key);
    });
  },
};

export const lastGame = {
  get: () => readJson(LAST_KEY),
  set: (id) => writeJson(LAST_KEY, id),
};

const PLAYER_KEY = "minesweeper.player";

/** This browser's player, `{ id, name, token }`: the token is shown once, at registration. */
export const playerKey = {
  get() {
    const p = readJson(PLAYER_KEY);
    return p && typeof p.id === "string" && typeof p.token === "string" ? p : null;
  },
  set: (p) => writeJson(PLAYER_KEY, { id: p.id, name: p.name, token: p.token }),
  forget: () => storage.removeItem(PLAYER_KEY),
};

export const DEFAULT_PREFS = Object.freeze({
  level: "beginner",
  custom: { width: 30, height: 24, mines: 150, first_click: "zero" },
  questionMarks: false,
  flagMode: false,
  noGuess: false,
  // Ask before the first hint of a game that could be ranked.
  confirmHints: true,
  // The cell size (CSS pixels) the player chose with the zoom; null: fit the window.
  cellSize: null,
});

export function loadPrefs() {
  const saved = readJson(PREFS_KEY) || {};
  return {
    ...DEFAULT_PREFS,
    ...saved,
    custom: { ...DEFAULT_PREFS.custom, ...(saved.custom || {}) },
  };
}

export function savePrefs(prefs) {
  writeJson(PREFS_KEY, prefs);
}
