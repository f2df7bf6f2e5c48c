"""A small multi-language repository that tests write into a temp dir and index.

The code is realistic enough for the ranking to matter: several files mention users,
retries and config, but one definition answers each question.
"""

from __future__ import annotations

from pathlib import Path

FILES: dict[str, str] = {
    "README.md": """# shop

A tiny shop backend used by the scrydb tests.

## Running

Start the server with `python -m app.cli serve`.

## Configuration

Settings are read from `shop.toml`; see `app/config.py`.
""",
    "pyproject.toml": """[project]
name = "shop"
version = "0.1.0"

[project.scripts]
shop = "app.cli:main"
""",
    "app/__init__.py": '"""The shop application."""\n',
    "app/retry.py": '''"""Retrying flaky calls."""

import random
import time

MAX_ATTEMPTS = 5


def compute_backoff(attempt: int, base: float = 0.5, cap: float = 30.0) -> float:
    """Seconds to sleep before the next attempt: exponential growth with full jitter."""
    ceiling = min(cap, base * (2 ** attempt))
    return random.uniform(0, ceiling)


class RetryPolicy:
    """Decides whether a failed call is tried again."""

    def __init__(self, attempts: int = MAX_ATTEMPTS, retry_on=(ConnectionError, TimeoutError)):
        self.attempts = attempts
        self.retry_on = retry_on

    def should_retry(self, attempt: int, error: Exception) -> bool:
        """True while attempts remain and the error is a transient one."""
        return attempt < self.attempts and isinstance(error, self.retry_on)

    def call(self, fn, *args, **kwargs):
        """Call fn, sleeping between attempts, until it succeeds or attempts run out."""
        attempt = 0
        while True:
            try:
                return fn(*args, **kwargs)
            except Exception as error:
                if not self.should_retry(attempt, error):
                    raise
                time.sleep(compute_backoff(attempt))
                attempt += 1
''',
    "app/users.py": '''"""Storage of user accounts."""

from dataclasses import dataclass


@dataclass
class User:
    id: int
    email: str
    active: bool = True


class UserRepository:
    """Keeps users in memory, indexed by id and by e-mail address."""

    def __init__(self):
        self._by_id = {}
        self._by_email = {}

    def get_user_by_id(self, user_id: int) -> User | None:
        """The user with this id, or None."""
        return self._by_id.get(user_id)

    def find_by_email(self, email: str) -> User | None:
        """Look a user up by e-mail address, ignoring case."""
        return self._by_email.get(email.lower())

    def save(self, user: User) -> None:
        """Insert or replace a user."""
        self._by_id[user.id] = user
        self._by_email[user.email.lower()] = user

    def deactivate(self, user_id: int) -> bool:
        """Mark a user inactive; False when there is no such user."""
        user = self._by_id.get(user_id)
        if user is None:
            return False
        user.active = False
        return True
''',
    "app/config.py": '''"""Loading settings from shop.toml."""

import tomllib
from pathlib import Path

DEFAULT_TIMEOUT = 30
DEFAULT_PORT = 8080


def load_config(path: str = "shop.toml") -> dict:
    """Read the settings file; a missing file gives the defaults."""
    p = Path(path)
    if not p.exists():
        return {"timeout": DEFAULT_TIMEOUT, "port": DEFAULT_PORT}
    with p.open("rb") as fh:
        data = tomllib.load(fh)
    data.setdefault("timeout", DEFAULT_TIMEOUT)
    data.setdefault("port", DEFAULT_PORT)
    return data
''',
    "app/cli.py": '''"""Command line of the shop."""

import argparse

from app.config import load_config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shop")
    parser.add_argument("command", choices=["serve", "check"])
    parser.add_argument("--config", default="shop.toml")
    return parser


def main(argv=None) -> int:
    """Parse arguments, load the config and run the command."""
    args = build_parser().parse_args(argv)
    config = load_config(args.config)
    if args.command == "serve":
        print(f"serving on port {config['port']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
''',
    "web/auth.ts": """// Authentication for the web API.

export interface TokenClaims {
  sub: string;
  exp: number;
}

/** Check a bearer token's signature and expiry; returns its claims or null. */
export function verifyToken(token: string, secret: string): TokenClaims | null {
  const [payload, signature] = token.split(".");
  if (!payload || sign(payload, secret) !== signature) {
    return null;
  }
  const claims = JSON.parse(atob(payload)) as TokenClaims;
  if (claims.exp * 1000 < Date.now()) {
    return null;
  }
  return claims;
}

function sign(payload: string, secret: string): string {
  let h = 0;
  for (const ch of payload + secret) {
    h = (h * 31 + ch.charCodeAt(0)) | 0;
  }
  return h.toString(16);
}
""",
    "web/server.ts": """import { verifyToken } from "./auth";

type Handler = (req: Request) => Promise<Response>;

/** Look up one user record for the HTTP API by its numeric id. */
export async function getUserById(id: number): Promise<Response> {
  const res = await fetch(`/internal/users/${id}`);
  if (res.status === 404) {
    return new Response("not found", { status: 404 });
  }
  return res;
}

export class Router {
  private routes = new Map<string, Handler>();

  add(path: string, handler: Handler): void {
    this.routes.set(path, handler);
  }

  async dispatch(req: Request): Promise<Response> {
    const handler = this.routes.get(new URL(req.url).pathname);
    if (!handler) {
      return new Response("no route", { status: 404 });
    }
    return handler(req);
  }
}
""",
    "svc/cache.go": """package svc

import "container/list"

// LRUCache keeps the most recently used entries up to a fixed capacity.
type LRUCache struct {
	capacity int
	order    *list.List
	items    map[string]*list.Element
}

type entry struct {
	key   string
	value []byte
}

// NewLRUCache makes an empty cache holding at most capacity entries.
func NewLRUCache(capacity int) *LRUCache {
	return &LRUCache{capacity: capacity, order: list.New(), items: map[string]*list.Element{}}
}

// Get returns the value for key and marks it as recently used.
func (c *LRUCache) Get(key string) ([]byte, bool) {
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).value, true
}

// Put stores a value, evicting the least recently used entry when the cache is full.
func (c *LRUCache) Put(key string, value []byte) {
	if el, ok := c.items[key]; ok {
		el.Value.(*entry).value = value
		c.order.MoveToFront(el)
		return
	}
	if c.order.Len() >= c.capacity {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*entry).key)
	}
	c.items[key] = c.order.PushFront(&entry{key, value})
}
""",
    "svc/main.go": """package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: svc PORT")
		os.Exit(2)
	}
	fmt.Println("starting cache service on", os.Args[1])
}
""",
    "core/src/lib.rs": """//! Query parsing for the shop's search box.

/// A token of a parsed query.
#[derive(Debug, PartialEq)]
pub enum Token {
    Word(String),
    Phrase(String),
}

/// Split a query into words and quoted phrases.
pub fn parse_query(input: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut rest = input.trim();
    while !rest.is_empty() {
        if let Some(stripped) = rest.strip_prefix('"') {
            let end = stripped.find('"').unwrap_or(stripped.len());
            out.push(Token::Phrase(stripped[..end].to_string()));
            rest = stripped.get(end + 1..).unwrap_or("").trim_start();
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            out.push(Token::Word(rest[..end].to_string()));
            rest = rest[end..].trim_start();
        }
    }
    out
}
""",
    "tests/test_retry.py": """from app.retry import RetryPolicy, compute_backoff


def test_backoff_is_capped():
    for attempt in range(20):
        assert compute_backoff(attempt, cap=4.0) <= 4.0


def test_policy_gives_up():
    policy = RetryPolicy(attempts=2)
    assert not policy.should_retry(2, ConnectionError())
""",
}


def write_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """Write the sample repository (or ``files``) under ``root``; returns ``root``."""
    for rel, text in (files or FILES).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root
