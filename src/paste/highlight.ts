import hljs from 'highlight.js';

/** Above this size a page shows plain text: highlighting 10 MB would take seconds and megabytes of spans. */
export const HIGHLIGHT_LIMIT_BYTES = 200 * 1024;
/** Auto-detection runs every candidate grammar, so it looks at the start only and at common languages. */
const DETECT_SAMPLE_CHARS = 8 * 1024;
const DETECT_SUBSET = [
  'bash',
  'c',
  'cpp',
  'csharp',
  'css',
  'diff',
  'dockerfile',
  'go',
  'ini',
  'java',
  'javascript',
  'json',
  'kotlin',
  'lua',
  'makefile',
  'markdown',
  'perl',
  'php',
  'python',
  'ruby',
  'rust',
  'scss',
  'shell',
  'sql',
  'swift',
  'typescript',
  'xml',
  'yaml',
];

const canonical = new Map<string, string>();
for (const name of hljs.listLanguages()) {
  canonical.set(name.toLowerCase(), name);
  for (const alias of hljs.getLanguage(name)?.aliases ?? []) {
    if (!canonical.has(alias.toLowerCase())) canonical.set(alias.toLowerCase(), name);
  }
}
canonical.set('text', 'plaintext');
canonical.set('plain', 'plaintext');

/** highlight.js's language names (what `syntax` accepts, besides their aliases), sorted. */
export const LANGUAGES: string[] = [...new Set(canonical.values())].sort();

/** The canonical name of a syntax label ("js" → "javascript"), or undefined when unknown. */
export function canonicalSyntax(label: string): string | undefined {
  return canonical.get(label.trim().toLowerCase());
}

export interface Highlighted {
  /** HTML: escaped text with highlight.js spans. */
  html: string;
  /** The language used, or undefined for plain text. */
  language?: string;
  /** Whether the language was guessed rather than given. */
  detected: boolean;
}

export function highlight(content: string, syntax: string | null): Highlighted {
  if (Buffer.byteLength(content) > HIGHLIGHT_LIMIT_BYTES || syntax === 'plaintext') {
    return { html: escapeHtml(content), detected: false };
  }
  if (syntax && hljs.getLanguage(syntax)) {
    return {
      html: hljs.highlight(content, { language: syntax, ignoreIllegals: true }).value,
      language: syntax,
      detected: false,
    };
  }
  const guess = hljs.highlightAuto(content.slice(0, DETECT_SAMPLE_CHARS), DETECT_SUBSET);
  if (!guess.language || guess.relevance < 5) return { html: escapeHtml(content), detected: false };
  return {
    html: hljs.highlight(content, { language: guess.language, ignoreIllegals: true }).value,
    language: guess.language,
    detected: true,
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]);
}
const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
