"""Tests for scrydb.chunk: real tree-sitter parses, no mocks.

Per language: a small realistic file with its expected chunk boundaries, kinds and
qualified symbols, both at the default size limits (definitions kept whole) and at
tiny limits (classes laid out as header + one chunk per member), plus the complete
symbol table. Then splitting, Markdown/text, fallbacks and the contract invariants
over every fixture, generated inputs and pathological text.
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scrydb.chunk.code as code_mod
from scrydb.chunk import Chunk, chunk_file
from scrydb.chunk import assemble as asm
from scrydb.chunk.code import compiled_query
from scrydb.chunk.specs import SPECS
from scrydb.langs import detect

Span = tuple[int, int, str, str | None]


def check_invariants(text: str, chunks: list[Chunk]) -> None:
    """The contract of chunk_file: sorted, disjoint, covering, exact content."""
    lines = text.split("\n")
    prev_end = 0
    owner: dict[int, int] = {}
    for i, c in enumerate(chunks):
        assert 1 <= c.start_line <= c.end_line <= len(lines), (c.start_line, c.end_line)
        assert c.start_line > prev_end, "chunks overlap or are out of order"
        prev_end = c.end_line
        assert c.content == "\n".join(lines[c.start_line - 1 : c.end_line])
        assert c.content.strip(), "a chunk of blank lines"
        for row in range(c.start_line, c.end_line + 1):
            owner[row] = i
        for d in c.defs:
            assert c.start_line <= d.line <= c.end_line
            assert d.name and d.qualname.endswith(d.name)
    for row, line in enumerate(lines, 1):
        if line.strip():
            assert row in owner, f"line {row} is in no chunk: {line[:60]!r}"


def spans(chunks: list[Chunk]) -> list[Span]:
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks]


def defs_of(chunks: list[Chunk]) -> list[tuple[str, str, int]]:
    return [(d.qualname, d.kind, d.line) for c in chunks for d in c.defs]


@pytest.fixture
def tiny_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Limits small enough that the fixtures' classes are split member by member."""
    monkeypatch.setattr(asm, "MAX_CHUNK_BYTES", 300)
    monkeypatch.setattr(asm, "TARGET_CHUNK_BYTES", 150)


@dataclass
class Case:
    lang: str
    path: str
    source: str
    whole: list[Span]  #: at the default limits
    split: list[Span]  #: at tiny_limits
    defs: list[tuple[str, str, int]]

    def __post_init__(self) -> None:
        self.source = self.source.removeprefix("\n")


CASES = [
    Case(
        "python",
        "client.py",
        r'''
"""HTTP client helpers."""

import json
import time

DEFAULT_TIMEOUT = 30
RETRIES = 3


class Client:
    """Talks to the server."""

    base_url: str = "http://localhost"

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.session = None
        self.calls = 0

    # Sends one request and decodes the JSON answer.
    @retry(times=RETRIES)
    def send(self, path: str, payload: dict) -> dict:
        body = json.dumps(payload)
        self.calls += 1
        answer = self._post(path, body)
        return json.loads(answer)

    def close(self):
        self.session = None


def backoff(attempt: int) -> float:
    delay = 2**attempt
    time.sleep(delay)
    return delay


def noop():
    pass
''',
        whole=[
            (1, 7, "code", None),
            (10, 29, "class", "Client"),
            (32, 39, "function", "backoff, noop"),
        ],
        split=[
            (1, 7, "code", None),
            (10, 13, "class", "Client"),
            (15, 18, "method", "Client.__init__"),
            (20, 29, "method", "Client.send, Client.close"),
            (32, 39, "function", "backoff, noop"),
        ],
        defs=[
            ("DEFAULT_TIMEOUT", "constant", 6),
            ("RETRIES", "constant", 7),
            ("Client", "class", 10),
            ("Client.base_url", "variable", 13),
            ("Client.__init__", "method", 15),
            ("Client.send", "method", 22),
            ("Client.close", "method", 28),
            ("backoff", "function", 32),
            ("noop", "function", 38),
        ],
    ),
    Case(
        "javascript",
        "server.js",
        r"""
import express from "express";
import { readFile } from "fs/promises";

const PORT = 8080;

/**
 * Handles GET /users/:id.
 */
export async function getUser(req, res) {
  const user = await db.find(req.params.id);
  if (!user) {
    return res.status(404).end();
  }
  res.json(user);
}

export default class Router {
  constructor(app) {
    this.app = app;
    this.routes = [];
  }

  add(path, handler) {
    this.routes.push({ path, handler });
    this.app.get(path, handler);
  }
}

const handler = async (event) => {
  const body = JSON.parse(event.body);
  console.log(body);
  return { statusCode: 200 };
};

module.exports.legacy = function (a, b) {
  const sum = a + b;
  console.log(sum);
  return sum;
};
""",
        whole=[
            (1, 4, "code", None),
            (6, 15, "function", "getUser"),
            (17, 27, "class", "Router"),
            (29, 33, "function", "handler"),
            (35, 39, "function", "legacy"),
        ],
        split=[
            (1, 4, "code", None),
            (6, 15, "function", "getUser"),
            (17, 27, "class", "Router"),
            (29, 33, "function", "handler"),
            (35, 39, "function", "legacy"),
        ],
        defs=[
            ("PORT", "constant", 4),
            ("getUser", "function", 9),
            ("Router", "class", 17),
            ("Router.constructor", "method", 18),
            ("Router.add", "method", 23),
            ("handler", "function", 29),
            ("legacy", "function", 35),
        ],
    ),
    Case(
        "typescript",
        "users.ts",
        r"""
import { Request } from "./http";

export interface User {
  id: number;
  name: string;
  email?: string;
}

export type UserId = number | string;

export enum Role {
  Admin = "admin",
  Member = "member",
  Guest = "guest",
}

@Injectable()
export class UserService {
  private cache = new Map<UserId, User>();

  constructor(private readonly http: Request) {}

  async find(id: UserId): Promise<User | undefined> {
    if (this.cache.has(id)) {
      return this.cache.get(id);
    }
    return this.http.get(`/users/${id}`);
  }
}

export const formatUser = (u: User): string => {
  const label = `${u.name} <${u.email ?? "?"}>`;
  return label.trim();
};
""",
        whole=[
            (1, 7, "interface", "User"),
            (9, 15, "enum", "UserId, Role"),
            (17, 29, "class", "UserService"),
            (31, 34, "function", "formatUser"),
        ],
        split=[
            (1, 7, "interface", "User"),
            (9, 15, "enum", "UserId, Role"),
            (17, 21, "class", "UserService"),
            (23, 29, "method", "UserService.find"),
            (31, 34, "function", "formatUser"),
        ],
        defs=[
            ("User", "interface", 3),
            ("UserId", "type", 9),
            ("Role", "enum", 11),
            ("UserService", "class", 18),
            ("UserService.cache", "variable", 19),
            ("UserService.constructor", "method", 21),
            ("UserService.find", "method", 23),
            ("formatUser", "function", 31),
        ],
    ),
    Case(
        "tsx",
        "UserCard.tsx",
        r"""
import { Request } from "./http";

export interface User {
  id: number;
  name: string;
  email?: string;
}

export type UserId = number | string;

export enum Role {
  Admin = "admin",
  Member = "member",
  Guest = "guest",
}

@Injectable()
export class UserService {
  private cache = new Map<UserId, User>();

  constructor(private readonly http: Request) {}

  async find(id: UserId): Promise<User | undefined> {
    if (this.cache.has(id)) {
      return this.cache.get(id);
    }
    return this.http.get(`/users/${id}`);
  }
}

export const formatUser = (u: User): string => {
  const label = `${u.name} <${u.email ?? "?"}>`;
  return label.trim();
};

export function UserCard({ user }: { user: User }) {
  const label = formatUser(user);
  return <div className="card">{label}</div>;
}
""",
        whole=[
            (1, 7, "interface", "User"),
            (9, 15, "enum", "UserId, Role"),
            (17, 29, "class", "UserService"),
            (31, 34, "function", "formatUser"),
            (36, 39, "function", "UserCard"),
        ],
        split=[
            (1, 7, "interface", "User"),
            (9, 15, "enum", "UserId, Role"),
            (17, 21, "class", "UserService"),
            (23, 29, "method", "UserService.find"),
            (31, 34, "function", "formatUser"),
            (36, 39, "function", "UserCard"),
        ],
        defs=[
            ("User", "interface", 3),
            ("UserId", "type", 9),
            ("Role", "enum", 11),
            ("UserService", "class", 18),
            ("UserService.cache", "variable", 19),
            ("UserService.constructor", "method", 21),
            ("UserService.find", "method", 23),
            ("formatUser", "function", 31),
            ("UserCard", "function", 36),
        ],
    ),
    Case(
        "go",
        "client.go",
        r"""
package client

import (
	"errors"
	"net/http"
)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("closed")

// Client sends requests to the API.
type Client struct {
	base string
	http *http.Client
}

// Send posts one request.
func (c *Client) Send(path string) error {
	if c.http == nil {
		return ErrClosed
	}
	_, err := c.http.Get(c.base + path)
	return err
}

// New builds a client.
func New(base string) *Client {
	return &Client{
		base: base,
		http: &http.Client{},
	}
}

type Sender interface {
	Send(path string) error
}
""",
        whole=[
            (1, 9, "code", None),
            (11, 15, "struct", "Client"),
            (17, 24, "method", "Client.Send"),
            (26, 32, "function", "New"),
            (34, 36, "interface", "Sender"),
        ],
        split=[
            (1, 9, "code", None),
            (11, 15, "struct", "Client"),
            (17, 24, "method", "Client.Send"),
            (26, 32, "function", "New"),
            (34, 36, "interface", "Sender"),
        ],
        defs=[
            ("ErrClosed", "variable", 9),
            ("Client", "struct", 12),
            ("Client.Send", "method", 18),
            ("New", "function", 27),
            ("Sender", "interface", 34),
        ],
    ),
    Case(
        "rust",
        "store.rs",
        r"""
use std::collections::HashMap;
use std::io;

const LIMIT: usize = 10;
static NAME: &str = "store";

/// A key-value store.
#[derive(Debug, Default)]
pub struct Store {
    items: HashMap<String, String>,
    hits: u64,
}

impl Store {
    /// Looks up a key.
    pub fn get(&mut self, key: &str) -> Option<&String> {
        self.hits += 1;
        let v = self.items.get(key);
        v
    }
}

impl std::fmt::Display for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Store({})", self.items.len())?;
        writeln!(f)?;
        Ok(())
    }
}

pub trait Cache {
    fn put(&mut self, key: String, value: String);
    fn size(&self) -> usize;
}

fn main() -> io::Result<()> {
    let mut s = Store::default();
    s.get("a");
    Ok(())
}
""",
        whole=[
            (1, 5, "code", None),
            (7, 12, "struct", "Store"),
            (14, 21, "impl", "Store"),
            (23, 29, "impl", "Store"),
            (31, 34, "trait", "Cache"),
            (36, 40, "function", "main"),
        ],
        split=[
            (1, 5, "code", None),
            (7, 12, "struct", "Store"),
            (14, 21, "impl", "Store"),
            (23, 29, "impl", "Store"),
            (31, 34, "trait", "Cache"),
            (36, 40, "function", "main"),
        ],
        defs=[
            ("LIMIT", "constant", 4),
            ("NAME", "constant", 5),
            ("Store", "struct", 9),
            ("Store", "impl", 14),
            ("Store.get", "method", 16),
            ("Store", "impl", 23),
            ("Store.fmt", "method", 24),
            ("Cache", "trait", 31),
            ("Cache.put", "method", 32),
            ("Cache.size", "method", 33),
            ("main", "function", 36),
        ],
    ),
    Case(
        "java",
        "UserRepository.java",
        r"""
package com.example.store;

import java.util.HashMap;
import java.util.Map;

/**
 * In-memory repository.
 */
@Repository
public class UserRepository extends Base implements Repo {
    private final Map<Long, User> users = new HashMap<>();

    public UserRepository() {
        super("users");
    }

    @Override
    public User find(long id) {
        User u = users.get(id);
        if (u == null) {
            throw new NotFound(id);
        }
        return u;
    }

    static class Entry {
        long id;
        void touch() {
            id++;
        }
    }
}

interface Repo {
    User find(long id);
}
""",
        whole=[(1, 4, "code", None), (6, 36, "class", "UserRepository, Repo")],
        split=[
            (1, 4, "code", None),
            (6, 15, "class", "UserRepository"),
            (17, 24, "method", "UserRepository.find"),
            (26, 36, "class", "UserRepository.Entry, Repo"),
        ],
        defs=[
            ("UserRepository", "class", 10),
            ("UserRepository.users", "variable", 11),
            ("UserRepository.UserRepository", "method", 13),
            ("UserRepository.find", "method", 18),
            ("UserRepository.Entry", "class", 26),
            ("UserRepository.Entry.id", "variable", 27),
            ("UserRepository.Entry.touch", "method", 28),
            ("Repo", "interface", 34),
            ("Repo.find", "method", 35),
        ],
    ),
    Case(
        "c",
        "buffer.c",
        r"""
#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE 4096

/* A growable buffer. */
struct buffer {
    char *data;
    size_t len;
    size_t cap;
};

typedef struct {
    int x;
    int y;
} point_t;

/* Appends bytes, growing as needed. */
static int buffer_append(struct buffer *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->data = realloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 0;
}

int main(int argc, char **argv)
{
    struct buffer b = {0};
    buffer_append(&b, "hi", 2);
    printf("%zu\n", b.len);
    return 0;
}
""",
        whole=[
            (1, 4, "code", None),
            (6, 11, "struct", "buffer"),
            (13, 16, "struct", "point_t"),
            (18, 28, "function", "buffer_append"),
            (30, 36, "function", "main"),
        ],
        split=[
            (1, 4, "code", None),
            (6, 11, "struct", "buffer"),
            (13, 16, "struct", "point_t"),
            (18, 28, "function", "buffer_append"),
            (30, 36, "function", "main"),
        ],
        defs=[
            ("BUF_SIZE", "macro", 4),
            ("buffer", "struct", 7),
            ("point_t", "struct", 13),
            ("buffer_append", "function", 19),
            ("main", "function", 30),
        ],
    ),
    Case(
        "cpp",
        "connection.cpp",
        r"""
#include <string>
#include <vector>

namespace net {

// A TCP connection.
class Connection : public Base {
 public:
  explicit Connection(std::string host);
  ~Connection();

  int send(const std::string& data) {
    bytes_ += data.size();
    queue_.push_back(data);
    return 0;
  }

 private:
  std::vector<std::string> queue_;
  size_t bytes_ = 0;
};

Connection::Connection(std::string host) : host_(std::move(host)) {
  open();
  log("open");
}

template <typename T>
T clamp(T v, T lo, T hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v;
}

}  // namespace net
""",
        whole=[
            (1, 4, "code", None),
            (6, 21, "class", "net.Connection"),
            (23, 26, "method", "net.Connection.Connection"),
            (28, 35, "function", "net.clamp"),
        ],
        split=[
            (1, 4, "code", None),
            (6, 10, "class", "net.Connection"),
            (12, 16, "method", "net.Connection.send"),
            (18, 21, "class", "net.Connection"),
            (23, 26, "method", "net.Connection.Connection"),
            (28, 35, "function", "net.clamp"),
        ],
        defs=[
            ("net", "namespace", 4),
            ("net.Connection", "class", 7),
            ("net.Connection.send", "method", 12),
            ("net.Connection.Connection", "method", 23),
            ("net.clamp", "function", 29),
        ],
    ),
    Case(
        "csharp",
        "OrderService.cs",
        r"""
using System;
using System.Collections.Generic;

namespace Shop.Orders
{
    /// <summary>Stores orders.</summary>
    [Serializable]
    public class OrderService : IOrderService
    {
        private readonly List<Order> _orders = new();

        public int Count => _orders.Count;

        public OrderService(ILogger logger)
        {
            _logger = logger;
            _logger.Info("created");
        }

        [Obsolete("use PlaceAsync")]
        public void Place(Order order)
        {
            _orders.Add(order);
            _logger.Info($"placed {order.Id}");
        }
    }

    public interface IOrderService
    {
        void Place(Order order);
        int Count { get; }
    }

    public enum Status { New, Paid, Shipped }
}
""",
        whole=[(1, 26, "class", "OrderService"), (28, 35, "interface", "IOrderService, Status")],
        split=[
            (1, 10, "class", "OrderService"),
            (12, 18, "method", "OrderService.Count, OrderService.OrderService"),
            (20, 26, "method", "OrderService.Place"),
            (28, 35, "interface", "IOrderService, Status"),
        ],
        defs=[
            ("Shop.Orders", "namespace", 4),
            ("OrderService", "class", 8),
            ("OrderService._orders", "variable", 10),
            ("OrderService.Count", "property", 12),
            ("OrderService.OrderService", "method", 14),
            ("OrderService.Place", "method", 21),
            ("IOrderService", "interface", 28),
            ("IOrderService.Place", "method", 30),
            ("IOrderService.Count", "property", 31),
            ("Status", "enum", 34),
        ],
    ),
    Case(
        "ruby",
        "invoice.rb",
        r"""
require "json"

module Billing
  # Computes invoices.
  class Invoice < Base
    attr_reader :lines

    def initialize(lines)
      @lines = lines
      @total = nil
    end

    def total
      @total ||= lines.sum(&:amount)
      @total.round(2)
    end

    def self.load(path)
      data = JSON.parse(File.read(path))
      new(data["lines"])
    end
  end
end

def helper(x)
  x * 2
end
""",
        whole=[(1, 23, "class", "Billing.Invoice"), (25, 27, "function", "helper")],
        split=[
            (1, 6, "class", "Billing.Invoice"),
            (8, 11, "method", "Billing.Invoice.initialize"),
            (13, 16, "method", "Billing.Invoice.total"),
            (18, 23, "method", "Billing.Invoice.load"),
            (25, 27, "function", "helper"),
        ],
        defs=[
            ("Billing", "module", 3),
            ("Billing.Invoice", "class", 5),
            ("Billing.Invoice.initialize", "method", 8),
            ("Billing.Invoice.total", "method", 13),
            ("Billing.Invoice.load", "method", 18),
            ("helper", "function", 25),
        ],
    ),
    Case(
        "php",
        "UserController.php",
        r"""
<?php

namespace App\Http\Controllers;

use App\Models\User;

/**
 * Handles users.
 */
#[Route('/users')]
class UserController extends Controller
{
    private UserRepository $repo;

    public function __construct(UserRepository $repo)
    {
        $this->repo = $repo;
        parent::__construct();
    }

    public function show(int $id): User
    {
        $user = $this->repo->find($id);
        abort_if(!$user, 404);
        return $user;
    }
}

function helper($x)
{
    $y = $x * 2;
    return $y;
}
""",
        whole=[
            (1, 5, "namespace", "App.Http.Controllers"),
            (7, 27, "class", "UserController"),
            (29, 33, "function", "helper"),
        ],
        split=[
            (1, 5, "namespace", "App.Http.Controllers"),
            (7, 13, "class", "UserController"),
            (15, 19, "method", "UserController.__construct"),
            (21, 27, "method", "UserController.show"),
            (29, 33, "function", "helper"),
        ],
        defs=[
            ("App.Http.Controllers", "namespace", 3),
            ("UserController", "class", 11),
            ("UserController.repo", "variable", 13),
            ("UserController.__construct", "method", 15),
            ("UserController.show", "method", 21),
            ("helper", "function", 29),
        ],
    ),
    Case(
        "kotlin",
        "Client.kt",
        r"""
package com.example.net

import kotlinx.coroutines.delay

/**
 * HTTP client with retries.
 */
@Suppress("unused")
class Client(private val base: String) : Closeable {
    private val retries = 3

    fun send(req: Request): Response {
        var attempt = 0
        while (attempt < retries) {
            attempt++
        }
        return Response(200)
    }

    companion object {
        const val TIMEOUT = 30
        fun create(): Client = Client("http://localhost")
    }

    override fun close() {
        println("closed")
    }
}

interface Transport {
    fun open()
    fun close()
}

object Registry {
    fun lookup(name: String): Client? = null
}

fun String.shout(): String {
    return uppercase()
}
""",
        whole=[
            (1, 28, "class", "Client"),
            (30, 37, "interface", "Transport, Registry"),
            (39, 41, "function", "String.shout"),
        ],
        split=[
            (1, 10, "class", "Client"),
            (12, 18, "method", "Client.send"),
            (20, 23, "object", "Client.Companion"),
            (25, 28, "method", "Client.close"),
            (30, 37, "interface", "Transport, Registry"),
            (39, 41, "function", "String.shout"),
        ],
        defs=[
            ("Client", "class", 8),
            ("Client.retries", "variable", 10),
            ("Client.send", "method", 12),
            ("Client.Companion", "object", 20),
            ("Client.TIMEOUT", "constant", 21),
            ("Client.create", "method", 22),
            ("Client.close", "method", 25),
            ("Transport", "interface", 30),
            ("Transport.open", "method", 31),
            ("Transport.close", "method", 32),
            ("Registry", "object", 35),
            ("Registry.lookup", "method", 36),
            ("String.shout", "function", 39),
        ],
    ),
    Case(
        "swift",
        "ImageCache.swift",
        r"""
import Foundation

/// A cache of images.
final class ImageCache {
    private var store: [String: Data] = [:]

    init() {
        store = [:]
        print("created")
    }

    func image(for key: String) -> Data? {
        guard let data = store[key] else {
            return nil
        }
        return data
    }
}

struct Point {
    var x: Double
    var y: Double

    func distance(to other: Point) -> Double {
        let dx = x - other.x
        let dy = y - other.y
        return (dx * dx + dy * dy).squareRoot()
    }
}

extension Point: CustomStringConvertible {
    var description: String { "(\(x), \(y))" }
}

protocol Drawable {
    func draw()
}
""",
        whole=[
            (1, 18, "class", "ImageCache"),
            (20, 29, "struct", "Point"),
            (31, 37, "impl", "Point, Drawable"),
        ],
        split=[
            (1, 5, "class", "ImageCache"),
            (7, 10, "method", "ImageCache.init"),
            (12, 18, "method", "ImageCache.image"),
            (20, 29, "struct", "Point"),
            (31, 37, "impl", "Point, Drawable"),
        ],
        defs=[
            ("ImageCache", "class", 4),
            ("ImageCache.store", "variable", 5),
            ("ImageCache.init", "method", 7),
            ("ImageCache.image", "method", 12),
            ("Point", "struct", 20),
            ("Point.x", "variable", 21),
            ("Point.y", "variable", 22),
            ("Point.distance", "method", 24),
            ("Point", "impl", 31),
            ("Point.description", "variable", 32),
            ("Drawable", "interface", 35),
            ("Drawable.draw", "method", 36),
        ],
    ),
    Case(
        "scala",
        "Cart.scala",
        r"""
package shop

import scala.collection.mutable

/** A shopping cart. */
class Cart(owner: String) {
  private val items = mutable.ListBuffer[Item]()

  def add(item: Item): Unit = {
    items += item
    println(s"added ${item.name}")
  }

  def total: BigDecimal = {
    val sum = items.map(_.price).sum
    sum.setScale(2)
  }
}

object Cart {
  def empty(owner: String): Cart = {
    val c = new Cart(owner)
    c
  }
}

trait Discount {
  def apply(total: BigDecimal): BigDecimal
}

case class Item(name: String, price: BigDecimal)
""",
        whole=[
            (1, 18, "class", "Cart"),
            (20, 25, "object", "Cart"),
            (27, 31, "trait", "Discount, Item"),
        ],
        split=[
            (1, 18, "class", "Cart"),
            (20, 25, "object", "Cart"),
            (27, 31, "trait", "Discount, Item"),
        ],
        defs=[
            ("Cart", "class", 6),
            ("Cart.items", "constant", 7),
            ("Cart.add", "method", 9),
            ("Cart.total", "method", 14),
            ("Cart", "object", 20),
            ("Cart.empty", "method", 21),
            ("Discount", "trait", 27),
            ("Discount.apply", "method", 28),
            ("Item", "class", 31),
        ],
    ),
    Case(
        "bash",
        "deploy.sh",
        r"""
#!/usr/bin/env bash
set -euo pipefail

LOG_DIR=/var/log/app

# Prints a message with a timestamp.
log() {
  local msg="$1"
  echo "$(date +%T) $msg" >> "$LOG_DIR/app.log"
  echo "$msg"
}

function cleanup {
  rm -rf "$TMP"
  log "cleaned"
  exit 0
}

trap cleanup EXIT
log "starting"
""",
        whole=[(1, 4, "code", None), (6, 11, "function", "log"), (13, 20, "function", "cleanup")],
        split=[(1, 4, "code", None), (6, 11, "function", "log"), (13, 20, "function", "cleanup")],
        defs=[("LOG_DIR", "constant", 4), ("log", "function", 7), ("cleanup", "function", 13)],
    ),
    Case(
        "lua",
        "mathx.lua",
        r"""
local M = {}

-- Adds two numbers.
function M.add(a, b)
  local s = a + b
  print(s)
  return s
end

function M:reset()
  self.count = 0
  self.items = {}
  return self
end

local function helper(x)
  local y = x * 2
  print(y)
  return y
end

return M
""",
        whole=[
            (1, 8, "function", "M.add"),
            (10, 14, "method", "M.reset"),
            (16, 22, "function", "helper"),
        ],
        split=[
            (1, 8, "function", "M.add"),
            (10, 14, "method", "M.reset"),
            (16, 22, "function", "helper"),
        ],
        defs=[("M.add", "function", 4), ("M.reset", "method", 10), ("helper", "function", 16)],
    ),
    Case(
        "elixir",
        "cart.ex",
        r'''
defmodule Shop.Cart do
  @moduledoc """
  A shopping cart.
  """

  alias Shop.Item

  @doc "Adds an item."
  @spec add(t(), Item.t()) :: t()
  def add(cart, item) do
    items = [item | cart.items]
    %{cart | items: items}
  end

  def total(%{items: items}) do
    items
    |> Enum.map(& &1.price)
    |> Enum.sum()
  end

  defp round2(x), do: Float.round(x, 2)
end
''',
        whole=[(1, 22, "module", "Shop.Cart")],
        split=[
            (1, 6, "module", "Shop.Cart"),
            (8, 13, "function", "Shop.Cart.add"),
            (15, 22, "function", "Shop.Cart.total, Shop.Cart.round2"),
        ],
        defs=[
            ("Shop.Cart", "module", 1),
            ("Shop.Cart.add", "function", 10),
            ("Shop.Cart.total", "function", 15),
            ("Shop.Cart.round2", "function", 21),
        ],
    ),
    Case(
        "haskell",
        "Geometry.hs",
        r"""
module Geometry
  ( Shape (..)
  , area
  ) where

import Data.List (sortOn)

-- | A plane shape.
data Shape
  = Circle Double
  | Rect Double Double
  deriving (Show, Eq)

-- | The area of a shape.
area :: Shape -> Double
area (Circle r) = pi * r * r
area (Rect w h) = w * h

class Scalable a where
  scale :: Double -> a -> a
  unit :: a

instance Scalable Shape where
  scale k (Circle r) = Circle (k * r)
  scale k (Rect w h) = Rect (k * w) (k * h)
  unit = Circle 1

largest :: [Shape] -> Maybe Shape
largest [] = Nothing
largest xs = Just (last (sortOn area xs))
""",
        whole=[
            (1, 6, "code", None),
            (8, 12, "type", "Shape"),
            (14, 17, "function", "area"),
            (19, 26, "impl", "Scalable"),
            (28, 30, "function", "largest"),
        ],
        split=[
            (1, 6, "code", None),
            (8, 12, "type", "Shape"),
            (14, 17, "function", "area"),
            (19, 26, "impl", "Scalable"),
            (28, 30, "function", "largest"),
        ],
        defs=[
            ("Shape", "type", 9),
            ("area", "function", 16),
            ("area", "function", 17),
            ("Scalable", "interface", 19),
            ("Scalable", "impl", 23),
            ("Scalable.scale", "method", 24),
            ("Scalable.scale", "method", 25),
            ("Scalable.unit", "method", 26),
            ("largest", "function", 29),
            ("largest", "function", 30),
        ],
    ),
    Case(
        "julia",
        "Shapes.jl",
        r'''
module Shapes

export area, Circle

"""
    Circle(r)

A circle of radius `r`.
"""
struct Circle
    r::Float64
end

"Area of a circle."
function area(c::Circle)
    r = c.r
    return pi * r^2
end

Base.show(io::IO, c::Circle) = print(io, "Circle(", c.r, ")")

macro twice(ex)
    quote
        $(esc(ex))
        $(esc(ex))
    end
end

end # module
''',
        whole=[
            (1, 12, "struct", "Shapes.Circle"),
            (14, 20, "function", "Shapes.area, Shapes.Base.show"),
            (22, 29, "macro", "Shapes.twice"),
        ],
        split=[
            (1, 12, "struct", "Shapes.Circle"),
            (14, 20, "function", "Shapes.area, Shapes.Base.show"),
            (22, 29, "macro", "Shapes.twice"),
        ],
        defs=[
            ("Shapes", "module", 1),
            ("Shapes.Circle", "struct", 10),
            ("Shapes.area", "function", 15),
            ("Shapes.Base.show", "function", 20),
            ("Shapes.twice", "macro", 22),
        ],
    ),
    Case(
        "solidity",
        "Token.sol",
        r"""
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./IERC20.sol";

/// @title A minimal token.
contract Token is IERC20 {
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;

    event Minted(address indexed to, uint256 amount);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
    }

    /// Moves tokens to `to`.
    function transfer(address to, uint256 amount) external returns (bool) {
        require(balanceOf[msg.sender] >= amount, "balance");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        return true;
    }
}
""",
        whole=[(1, 4, "code", None), (6, 25, "class", "Token")],
        split=[
            (1, 4, "code", None),
            (6, 11, "class", "Token"),
            (13, 16, "method", "Token.constructor"),
            (18, 25, "method", "Token.transfer"),
        ],
        defs=[
            ("Token", "class", 7),
            ("Token.Minted", "type", 11),
            ("Token.constructor", "method", 13),
            ("Token.transfer", "method", 19),
        ],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_language_whole(case: Case) -> None:
    assert detect(case.path) == case.lang
    chunks = chunk_file(case.path, case.source, case.lang)
    check_invariants(case.source, chunks)
    assert spans(chunks) == case.whole
    assert defs_of(chunks) == case.defs


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_language_split(case: Case, tiny_limits: None) -> None:
    chunks = chunk_file(case.path, case.source, case.lang)
    check_invariants(case.source, chunks)
    assert spans(chunks) == case.split
    # The symbol table does not depend on where chunks are cut.
    assert defs_of(chunks) == case.defs


def test_every_language_case_present() -> None:
    langs = {c.lang for c in CASES}
    required = {"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp"}
    required |= {"csharp", "ruby", "php", "kotlin", "swift", "scala", "bash", "lua"}
    assert required <= langs


def _chunk_of(case_lang: str, symbol: str) -> Chunk:
    case = next(c for c in CASES if c.lang == case_lang)
    chunks = chunk_file(case.path, case.source, case.lang)
    return next(c for c in chunks if c.symbol == symbol or symbol in c.peers)


@pytest.mark.parametrize(
    ("lang", "symbol", "first_line"),
    [
        ("python", "Client.send", "    # Sends one request and decodes the JSON answer."),
        ("javascript", "getUser", "/**"),
        ("typescript", "UserService", "@Injectable()"),
        ("go", "Client.Send", "// Send posts one request."),
        ("rust", "Store", "/// A key-value store."),
        ("java", "UserRepository.find", "    @Override"),
        ("c", "buffer_append", "/* Appends bytes, growing as needed. */"),
        ("cpp", "net.Connection", "// A TCP connection."),
        ("csharp", "OrderService.Place", '        [Obsolete("use PlaceAsync")]'),
        ("php", "UserController", "/**"),
        ("bash", "log", "# Prints a message with a timestamp."),
    ],
)
def test_leading_comments_and_attributes_stay(
    lang: str, symbol: str, first_line: str, tiny_limits: None
) -> None:
    """At tiny limits every member is its own chunk: its comments came along."""
    chunk = _chunk_of(lang, symbol)
    assert chunk.content.split("\n")[0] == first_line


def test_specs_compile_and_name_real_node_types() -> None:
    from tree_sitter_language_pack import get_language

    for lang, spec in SPECS.items():
        compiled_query(spec)  # raises on an unknown node type or field
        language = get_language(spec.grammar)  # type: ignore[arg-type]
        types = set(spec.defs) | spec.wrappers | spec.comments | spec.prefixes
        types |= spec.transparent | spec.unqualified
        unknown = {t for t in types if language.id_for_node_kind(t, True) is None}
        assert not unknown, (lang, unknown)


# ------------------------------------------------------------------- splitting


def _big_class(n_methods: int = 12) -> str:
    out = [
        "import os",
        "",
        "",
        "class Big(Base):",
        '    """A big class.',
        "",
        "    With a long docstring.",
        '    """',
        "",
        "    limit = 10",
        '    name: str = "big"',
        "",
    ]
    for i in range(n_methods):
        out += [f"    def method_{i}(self, x):", f'        """Method {i}."""']
        out += [f"        y{j} = x * {j} + self.limit  # step {j} of method {i}" for j in range(8)]
        out += ["        return x", ""]
    out += ["    class Inner:", "        def deep(self):", "            return 1", ""]
    return "\n".join(out)


def test_big_class_splits_into_header_and_methods() -> None:
    text = _big_class()
    assert len(text) > asm.MAX_CHUNK_BYTES
    chunks = chunk_file("big.py", text, "python")
    check_invariants(text, chunks)
    header = chunks[0]
    assert (header.kind, header.symbol) == ("class", "Big")
    assert 'name: str = "big"' in header.content
    assert "def method_0" not in header.content
    methods = [c for c in chunks if c.kind == "method"]
    assert [c.symbol for c in methods[:11]] == [f"Big.method_{i}" for i in range(11)]
    assert all(c.content.lstrip().startswith("def method_") for c in methods[:12])
    # The nested class is a small member: it joins its neighbour, which is then named
    # by both, and keeps its symbols.
    assert methods[11].symbol == "Big.method_11, Big.Inner"
    quals = [d.qualname for c in chunks for d in c.defs]
    assert "Big.Inner" in quals and "Big.Inner.deep" in quals


def test_big_class_in_braces_language() -> None:
    methods = "\n\n".join(
        f"    public int method{i}(int x) {{\n"
        + "\n".join(f"        x = x * {j} + {i}; // step {j}" for j in range(10))
        + "\n        return x;\n    }"
        for i in range(10)
    )
    text = f"package p;\n\n/** Big. */\npublic class Big {{\n    private int a;\n\n{methods}\n}}\n"
    chunks = chunk_file("Big.java", text, "java")
    check_invariants(text, chunks)
    assert (chunks[0].kind, chunks[0].symbol) == ("class", "Big")
    assert [c.symbol for c in chunks[1:]] == [f"Big.method{i}" for i in range(10)]
    assert chunks[-1].content.endswith("    }\n}")  # the closing brace joins the last method


def _huge_function() -> str:
    out = ["def huge(a, b):", '    """Huge function."""', "    total = 0"]
    for k in range(70):
        out += [
            f"    if a > {k}:",
            f"        total += b * {k}",
            f'        print("step {k}", total)',
        ]
        out += ["        a = a - 1"]
        if k % 7 == 0:
            out.append("")
    out += ["    return total", ""]
    return "\n".join(out)


def test_huge_function_splits_at_statements() -> None:
    text = _huge_function()
    assert len(text) > 2 * asm.MAX_CHUNK_BYTES
    chunks = chunk_file("huge.py", text, "python")
    check_invariants(text, chunks)
    assert len(chunks) >= 3
    assert chunks[0].content.startswith("def huge(a, b):")
    for c in chunks:
        assert (c.kind, c.symbol) == ("function", "huge")
        assert len(c.content) <= asm.MAX_CHUNK_BYTES
        assert len(c.content) >= asm.TARGET_CHUNK_BYTES // 2
    for c in chunks[1:]:  # every piece starts at a statement of the body
        assert c.content.startswith("    if a > ")
    assert [d.qualname for c in chunks for d in c.defs] == ["huge"]


def test_huge_statement_is_cut_by_lines() -> None:
    rows = ",\n".join(f'    "key_{i}": {i}' for i in range(600))
    text = f"TABLE = {{\n{rows}\n}}\n"
    chunks = chunk_file("table.py", text, "python")
    check_invariants(text, chunks)
    assert len(chunks) > 3
    assert all(len(c.content) <= asm.MAX_CHUNK_BYTES for c in chunks)
    assert defs_of(chunks) == [("TABLE", "constant", 1)]


def test_module_code_grouped_and_tiny_spans_merged() -> None:
    text = textwrap.dedent(
        """\
        import os
        import sys

        A = 1

        B = 2


        def two_lines():
            return 1


        def real(x):
            y = x + 1
            z = y * 2
            return z


        def other_real(x):
            y = x - 1
            z = y * 3
            return z
        """
    )
    chunks = chunk_file("m.py", text, "python")
    check_invariants(text, chunks)
    # Imports and constants are one code chunk; the 2-line function joins the
    # smaller of its (equally distant) neighbours, which is then named by both;
    # 4-line functions stay apart.
    assert spans(chunks) == [
        (1, 6, "code", None),
        (9, 16, "function", "two_lines, real"),
        (19, 22, "function", "other_real"),
    ]
    assert ("two_lines", "function", 9) in defs_of(chunks)


def test_small_file_is_one_chunk() -> None:
    text = "import os\n\nX = 1\n\ndef f():\n    return X\n"
    chunks = chunk_file("s.py", text, "python")
    assert spans(chunks) == [(1, 6, "function", "f")]
    assert defs_of(chunks) == [("X", "constant", 3), ("f", "function", 5)]


def test_js_forms_of_functions() -> None:
    text = textwrap.dedent(
        """\
        const api = {
          list() {
            return [];
          },
          get: function (id) {
            return id;
          },
        };

        Foo.prototype.bar = function () {
          return 1;
        };

        exports.run = () => {
          return 2;
        };

        export default function () {
          return 3;
        }
        """
    )
    chunks = chunk_file("a.js", text, "javascript")
    check_invariants(text, chunks)
    # ``api`` is a module-level binding, and names no scope: its methods are
    # ``api.list``, not ``api.api.list``.
    assert defs_of(chunks) == [
        ("api", "constant", 1),
        ("api.list", "method", 2),
        ("api.get", "method", 5),
        ("Foo.bar", "method", 10),
        ("run", "function", 14),
        ("default", "function", 18),
    ]


def test_go_rust_cpp_receivers() -> None:
    go = "package p\n\nfunc (s *Server[T]) Start(ctx context.Context) error {\n\treturn nil\n}\n"
    assert defs_of(chunk_file("s.go", go, "go")) == [("Server.Start", "method", 3)]
    rust = "impl<T: Clone> fmt::Debug for Wrapper<T> {\n    fn fmt(&self) {}\n}\n"
    assert defs_of(chunk_file("w.rs", rust, "rust")) == [
        ("Wrapper", "impl", 1),
        ("Wrapper.fmt", "method", 2),
    ]
    cpp = "namespace a { namespace b {\nint Foo::Bar::baz(int x) {\n  return x;\n}\n}}\n"
    assert ("a.b.Foo.Bar.baz", "method", 2) in defs_of(chunk_file("f.cc", cpp, "cpp"))


def test_cpp_header_named_dot_h_uses_cpp() -> None:
    text = "namespace ui {\nclass Button {\n public:\n  void click();\n};\n}\n"
    assert detect("button.h") == "c"
    assert ("ui.Button", "class", 2) in defs_of(chunk_file("button.h", text, "c"))


def test_c_include_guard_is_transparent() -> None:
    body = "\n\n".join(
        f"static int f{i}(int x)\n{{\n"
        + "\n".join(f"    x += {j} * {i};  /* step {j} */" for j in range(12))
        + "\n    return x;\n}"
        for i in range(6)
    )
    text = f"#ifndef X_H\n#define X_H\n\n{body}\n\n#endif\n"
    chunks = chunk_file("x.h", text, "c")
    check_invariants(text, chunks)
    assert [c.symbol for c in chunks] == [f"f{i}" for i in range(6)]


# -------------------------------------------------------------- text formats


def test_markdown_sections() -> None:
    text = textwrap.dedent(
        """\
        ---
        title: Guide
        ---

        # Project

        Intro paragraph one.
        More intro.

        ## Install

        Run this:

        ```bash
        # not a heading
        pip install project
        ```

        ### From source

        Clone and build.
        Then run make.
        And test it.

        Setext Title
        ============

        Body of setext section
        with two lines and more
        and more.

        ## Tiny
        x
        """
    )
    chunks = chunk_file("README.md", text, "markdown")
    check_invariants(text, chunks)
    assert spans(chunks) == [
        (1, 8, "section", "Project"),
        (10, 17, "section", "Project > Install"),
        (19, 23, "section", "Project > Install > From source"),
        (25, 33, "section", "Setext Title"),
    ]


def test_markdown_big_section_is_windowed() -> None:
    para = "\n".join(f"Sentence number {i} of a long section." for i in range(300))
    text = f"# Big\n\n{para}\n\n# Next\n\nshort\ntext\nhere\n"
    chunks = chunk_file("doc.md", text, "markdown")
    check_invariants(text, chunks)
    big = [c for c in chunks if c.symbol == "Big"]
    assert len(big) > 2
    assert all(len(c.content) <= asm.MAX_CHUNK_BYTES for c in chunks)
    assert chunks[-1].symbol == "Next"


def test_rst_sections() -> None:
    text = "=====\nTitle\n=====\n\nIntro text\nmore\n\nUsage\n-----\n\nline one\nline two\nline three\n"
    chunks = chunk_file("doc.rst", text, "rst")
    check_invariants(text, chunks)
    assert [c.symbol for c in chunks] == ["Title", "Title > Usage"]


def test_text_windows_snap_to_blank_lines() -> None:
    paras = [
        "\n".join(
            f"para {p} line {i} with some words" for i in range(random.Random(p).randint(3, 12))
        )
        for p in range(40)
    ]
    text = "\n\n".join(paras) + "\n"
    chunks = chunk_file("notes.txt", text, "text")
    check_invariants(text, chunks)
    lines = text.split("\n")
    assert len(chunks) > 5
    for c in chunks:
        assert c.kind == "block"
        assert c.end_line - c.start_line + 1 <= 60
        assert len(c.content) <= asm.MAX_CHUNK_BYTES
    for c in chunks[1:]:  # every cut falls on a paragraph boundary
        assert not lines[c.start_line - 2].strip()


def test_yaml_and_toml_sections() -> None:
    big = "\n".join(f"  step_{i}:\n    run: echo {i} and a long enough command" for i in range(80))
    yaml = f"# CI\nname: ci\non:\n  push:\n    branches: [main]\n\njobs:\n{big}\n"
    chunks = chunk_file("ci.yml", yaml, "yaml")
    check_invariants(yaml, chunks)
    assert chunks[0].symbol.split(", ")[0] == "name" and chunks[0].start_line == 1
    assert all(c.kind == "block" for c in chunks)
    assert any("jobs" in c.symbol.split(", ") for c in chunks)
    assert all(len(c.content) <= asm.MAX_CHUNK_BYTES for c in chunks)

    toml = "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 100\n"
    toml += "".join(f"\n[[package]]\nname = 'p{i}'\nversion = '1.{i}'\n" for i in range(200))
    chunks = chunk_file("pyproject.toml", toml, "toml")
    check_invariants(toml, chunks)
    assert chunks[0].symbol.split(", ")[:2] == ["project", "tool.ruff"]
    assert all(c.symbol == "package" for c in chunks[1:])  # [[package]] named once
    assert all(len(c.content) <= asm.TARGET_CHUNK_BYTES for c in chunks)


def test_grouped_toml_tables_are_named_by_each_table() -> None:
    # Issue 42: a chunk of small tables was named by its first one (``project.urls``)
    # while it carried the entry-point vote of ``[project.scripts]`` below it.
    toml = (
        '[project.urls]\nSource = "https://example.org/x"\n\n'
        '[project.scripts]\nx = "x.cli:main"\n\n'
        '[build-system]\nrequires = ["flit_core"]\n'
    )
    chunks = chunk_file("pyproject.toml", toml, "toml")
    check_invariants(toml, chunks)
    assert len(chunks) == 1
    c = chunks[0]
    assert c.symbol == "project.urls, project.scripts, build-system"
    assert c.index_names()[:3] == ["project.urls", "project.scripts", "build-system"]


def test_ini_sections_and_starlark_functions() -> None:
    ini = "[metadata]\nname = x\n\n[options]\npackages = find:\n" + "".join(
        f"\n[section{i}]\nkey = {'v' * 80}\nother = {i}\n" for i in range(30)
    )
    chunks = chunk_file("setup.cfg", ini, "ini")
    check_invariants(ini, chunks)
    assert chunks[0].symbol.split(", ")[0] == "metadata"
    assert all(c.symbol and c.symbol.startswith("section") for c in chunks[1:])

    build = 'load("@x//:defs.bzl", "lib")\n\ndef my_macro(name):\n    native.genrule(\n'
    build += '        name = name,\n        cmd = "echo",\n    )\n\nlib(\n    name = "a",\n)\n'
    chunks = chunk_file("BUILD", build, "starlark")
    check_invariants(build, chunks)
    assert ("my_macro", "function", 3) in defs_of(chunks)


def test_unknown_and_none_language_use_windows() -> None:
    text = "\n".join(f"{i}" for i in range(200))
    for lang in (None, "json", "text", "dart", "no-such-lang"):
        chunks = chunk_file("f", text, lang)
        check_invariants(text, chunks)
        assert all(c.kind == "block" and c.defs == [] for c in chunks)


# -------------------------------------------------------------- robustness

PATHOLOGICAL = {
    "empty": "",
    "whitespace": "  \n\t\n \r\n\n",
    "one_line": "x",
    "no_newline": "def f():\n    return 1",
    "nul": "def f():\n    x = '\x00\x00'\n    return x\n\x00\x00\n",
    "long_line": "x = '" + "a" * 100_000 + "'\n" + "def f():\n    pass\n",
    "crlf": "import os\r\n\r\nclass A:\r\n    def f(self):\r\n        return 1\r\n\r\n\r\ndef g():\r\n    x = 1\r\n    y = 2\r\n    return x + y\r\n",
    "cr_only": "def f():\r    return 1\r\rdef g():\r    return 2\r",
    "deep_parens": "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
    "deep_braces": "function f() {" * 10_000 + "}" * 10_000 + "\n",
    "deep_blocks": "".join(" " * i + "if x:\n" for i in range(500)) + " " * 500 + "pass\n",
    "unbalanced": "class A {\n  void f() {\n    if (x) {\n" * 50,
    "surrogates": "def f():\n    return '\udcff\udc80'\n",
    "unicode": "def grüße(name):\n    # ☃ → ✓\n    return f'hallo {name} 😀'\n\n\nclass Ünïcode:\n    pass\n",
}


def _random_text(seed: int, size: int = 5000) -> str:
    rnd = random.Random(seed)
    return bytes(rnd.getrandbits(8) for _ in range(size)).decode("utf-8", errors="replace")


ROBUST_LANGS = [*sorted(SPECS), "markdown", "rst", "yaml", "toml", "json", "text", None]


@pytest.mark.parametrize("lang", ROBUST_LANGS)
def test_pathological_inputs_never_raise(lang: str | None) -> None:
    for name, text in PATHOLOGICAL.items():
        chunks = chunk_file(f"{name}.x", text, lang)
        check_invariants(text, chunks)
        if not text.strip():
            assert chunks == []
    for seed in range(3):
        text = _random_text(seed)
        check_invariants(text, chunk_file("r.x", text, lang))


def test_crlf_keeps_carriage_returns() -> None:
    text = PATHOLOGICAL["crlf"]
    chunks = chunk_file("a.py", text, "python")
    check_invariants(text, chunks)
    assert all(line.endswith("\r") for c in chunks for line in c.content.split("\n"))
    assert ("A.f", "method", 4) in defs_of(chunks)
    assert ("g", "function", 8) in defs_of(chunks)


def test_parse_timeout_falls_back_to_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(code_mod, "PARSE_SECONDS", -10.0)
    case = CASES[0]
    chunks = chunk_file(case.path, case.source, case.lang)
    check_invariants(case.source, chunks)
    assert all(c.kind == "block" for c in chunks)
    monkeypatch.undo()
    # The parser was reset: the next parse of the same grammar works.
    assert spans(chunk_file(case.path, case.source, case.lang)) == case.whole


def test_the_parse_budget_counts_work_not_waiting() -> None:
    """The time budgets run on the thread's CPU time (records.budget_clock): a process
    that waits (a starved one on a busy machine) keeps its budget, so the same file
    chunks the same way however loaded the machine (issue 46: tests/fuzz/chunk.py at
    nice 19 saw C# chunked two ways when the wall clock ran the budget out)."""
    import threading
    import time

    from scrydb.chunk.records import budget_clock

    wall, cpu = time.monotonic(), budget_clock()
    threading.Event().wait(0.3)  # waiting, not working
    assert time.monotonic() - wall >= 0.3
    assert budget_clock() - cpu < 0.05
    spent = budget_clock()
    sum(i * i for i in range(300_000))  # working
    assert budget_clock() > spent


def test_internal_error_falls_back_to_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(code_mod, "chunk_code", boom)
    text = CASES[0].source
    chunks = chunk_file("a.py", text, "python")
    check_invariants(text, chunks)
    assert chunks and all(c.kind == "block" for c in chunks)


code_chars = st.sampled_from(list("abcxyz_019 \t\n\r(){}[]<>:;,.'\"#/*-=+\\@$!?%&|^~`\x00é☃"))
code_texts = st.lists(code_chars, max_size=400).map("".join)
_TOKENS = "def |class |fn |func |function |impl |struct |return |if |end|{|}|(|)|:|x|y = 1;"
_TOKENS += "|namespace |module |=>|\n|\n    |\n\n|// c\n|# c\n|/** d */\n|@dec\n|#[a]\n"
code_words = st.lists(st.sampled_from(_TOKENS.split("|")), max_size=120).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(st.text(max_size=300), code_texts, code_words),
    lang=st.sampled_from(ROBUST_LANGS),
)
def test_invariants_hold_for_generated_text(text: str, lang: str | None) -> None:
    check_invariants(text, chunk_file("gen.x", text, lang))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(code_words, code_texts),
    lang=st.sampled_from(sorted(SPECS)),
    limit=st.integers(min_value=40, max_value=400),
)
def test_invariants_hold_at_any_limits(text: str, lang: str, limit: int) -> None:
    old = (asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES)
    asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES = limit, limit // 2
    try:
        for t in (text, text * 3):
            check_invariants(t, chunk_file("gen.x", t, lang))
    finally:
        asm.MAX_CHUNK_BYTES, asm.TARGET_CHUNK_BYTES = old


@pytest.mark.parametrize("case", CASES, ids=[c.lang for c in CASES])
def test_invariants_under_edits(case: Case) -> None:
    """Truncations and line deletions of every fixture (broken syntax) stay valid."""
    lines = case.source.split("\n")
    rnd = random.Random(case.lang)
    for cut in range(0, len(case.source), max(1, len(case.source) // 25)):
        text = case.source[:cut]
        check_invariants(text, chunk_file(case.path, text, case.lang))
    for _ in range(10):
        kept = [line for line in lines if rnd.random() > 0.2]
        text = "\r\n".join(kept)
        check_invariants(text, chunk_file(case.path, text, case.lang))


# -- small definitions merged into one chunk (issue 12, item 6) ---------------------------

ERRORS_PY = '''"""Errors raised by the console."""


class ConsoleError(Exception):
    """An error in console operation."""


class MarkupError(ConsoleError):
    """Markup was badly formatted."""


class StyleError(Exception):
    pass
'''

APPENDED_PY = """class Bar:
    def a(self):
        return 1

    def b(self):
        return 2


def helper():
    return Bar()
"""


def test_merged_peer_definitions_are_all_named() -> None:
    """Tiny classes merged into one chunk: the label names every one of them (not the
    first one's), and each keeps its own line in the symbol table."""
    chunks = chunk_file("errors.py", ERRORS_PY, "python")
    check_invariants(ERRORS_PY, chunks)
    assert spans(chunks) == [(1, 13, "class", "ConsoleError, MarkupError, StyleError")]
    assert defs_of(chunks) == [
        ("ConsoleError", "class", 4),
        ("MarkupError", "class", 8),
        ("StyleError", "class", 12),
    ]
    assert chunks[0].index_names() == ["ConsoleError", "MarkupError", "StyleError"]


def test_function_appended_after_a_class_stands_alone() -> None:
    """A small top-level function after a small whole class is its own chunk: it never
    joins the class's chunk (issue 42), and every definition keeps its line."""
    chunks = chunk_file("bar.py", APPENDED_PY, "python")
    check_invariants(APPENDED_PY, chunks)
    assert spans(chunks) == [(1, 6, "class", "Bar"), (9, 10, "function", "helper")]
    assert defs_of(chunks) == [
        ("Bar", "class", 1),
        ("Bar.a", "method", 2),
        ("Bar.b", "method", 5),
        ("helper", "function", 9),
    ]
    assert chunks[0].index_names() == ["Bar", "Bar.a", "Bar.b"]
    assert chunks[1].index_names() == ["helper"]


QUOKKA_PY = """
def compute_quokka_backoff(attempt):
    \"\"\"Seconds a marsupial waits before hopping again.\"\"\"
    return min(60, 2**attempt)
"""


def _big_class_then(function: str) -> str:
    """``_big_class`` (laid out member by member) with ``function`` appended at the end."""
    return _big_class() + "\n" + function


def test_function_after_a_split_class_stands_alone() -> None:
    """Issue 42: a 3-line function appended after a big class whose members were split
    used to join the last method's chunk; it is a chunk of its own now."""
    text = _big_class_then(QUOKKA_PY)
    chunks = chunk_file("helpers.py", text, "python")
    check_invariants(text, chunks)
    last = chunks[-1]
    assert (last.kind, last.symbol) == ("function", "compute_quokka_backoff")
    assert last.content.startswith("def compute_quokka_backoff(attempt):")
    assert [d.qualname for d in last.defs] == ["compute_quokka_backoff"]
    assert all("compute_quokka_backoff" not in (c.symbol or "") for c in chunks[:-1])
    assert chunks[-2].symbol == "Big.method_11, Big.Inner"  # members still merge


def test_function_after_a_class_joins_a_free_neighbour() -> None:
    """A small top-level function between a class and another function may still join
    the function (a free neighbour), never the class."""
    text = APPENDED_PY + "\n\ndef real(x):\n    y = x + 1\n    z = y * 2\n    return z\n"
    chunks = chunk_file("bar.py", text, "python")
    check_invariants(text, chunks)
    assert spans(chunks) == [(1, 6, "class", "Bar"), (9, 16, "function", "helper, real")]


def test_small_class_does_not_join_a_function() -> None:
    """The rule holds both ways: a two-line class between two functions stands alone
    rather than joining either (small classes still merge with each other as peers,
    see ``test_merged_peer_definitions_are_all_named``)."""
    text = (
        "def load(path):\n    with open(path) as f:\n        data = f.read()\n    return data\n"
        "\n\nclass LoadError(Exception):\n    pass\n"
        "\n\ndef save(path, data):\n    with open(path, 'w') as f:\n        f.write(data)\n"
        "    return len(data)\n"
    )
    chunks = chunk_file("io.py", text, "python")
    check_invariants(text, chunks)
    assert spans(chunks) == [
        (1, 4, "function", "load"),
        (7, 8, "class", "LoadError"),
        (11, 14, "function", "save"),
    ]


TS_CLASS_METHODS = "\n\n".join(
    f"  method{i}(x: number): number {{\n"
    + "\n".join(f"    x = x * {j} + {i}; // step {j} of method {i}" for j in range(8))
    + "\n    return x;\n  }"
    for i in range(10)
)
TS_QUOKKA = (
    "export function computeQuokkaBackoff(attempt: number): number {\n"
    "  return Math.min(60, 2 ** attempt);\n"
    "}\n"
)


@pytest.mark.parametrize("size", ["split", "whole"])
def test_ts_function_after_a_class_stands_alone(size: str) -> None:
    """Issue 42 in a brace language: after a big class (laid out member by member, its
    closing brace joining the last method) or a small whole one, an appended top-level
    function is its own chunk."""
    body = TS_CLASS_METHODS if size == "split" else "  ping(): string {\n    return 'pong';\n  }"
    text = f"export class Hopper {{\n  private n = 0;\n\n{body}\n}}\n\n{TS_QUOKKA}"
    chunks = chunk_file("hopper.ts", text, "typescript")
    check_invariants(text, chunks)
    assert spans(chunks)[-1][2:] == ("function", "computeQuokkaBackoff")
    assert chunks[-1].content.startswith("export function computeQuokkaBackoff(")
    assert chunks[-2].content.endswith("  }\n}")  # the class's closing brace stayed with it
    assert all("computeQuokkaBackoff" not in (c.symbol or "") for c in chunks[:-1])
    if size == "split":
        assert chunks[-2].symbol == "Hopper.method9"
    else:
        assert spans(chunks) == [
            (1, 7, "class", "Hopper"),
            (9, 11, "function", "computeQuokkaBackoff"),
        ]


def test_cpp_function_after_a_class_stands_alone() -> None:
    """C++: a small free function after a small class is its own chunk; inside a
    namespace two small free functions still merge with each other, not the class."""
    socket = "class Socket {\n public:\n  int fd;\n  void close();\n};\n"
    text = socket + "\nint backoff(int n) {\n  return n * 2;\n}\n"
    chunks = chunk_file("socket.cpp", text, "cpp")
    check_invariants(text, chunks)
    assert spans(chunks) == [(1, 5, "class", "Socket"), (7, 9, "function", "backoff")]
    text = (
        "namespace net {\n\n" + socket + "\nint backoff(int n) {\n  return n * 2;\n}\n"
        "\nint jitter(int n) {\n  return n + 1;\n}\n\n}  // namespace net\n"
    )
    chunks = chunk_file("socket.cpp", text, "cpp")
    check_invariants(text, chunks)
    assert spans(chunks) == [
        (1, 7, "class", "net.Socket"),
        (9, 17, "function", "net.backoff, net.jitter"),
    ]


def test_one_owner_keeps_a_single_name(tiny_limits: None) -> None:
    """A class header merged with its first method, or a class with its methods, is
    the class's chunk: members do not join the label."""
    whole = "class VectorIndex:\n    def __init__(self):\n        self.x = 1\n"
    assert spans(chunk_file("v.py", whole, "python")) == [(1, 3, "class", "VectorIndex")]
    big = "class Big:\n    x = 1\n\n" + "".join(
        f"    def method{i}(self, value):\n"
        + "".join(f"        value = value + {j}  # step {j} of the work\n" for j in range(6))
        + "        return value\n\n"
        for i in range(3)
    )
    chunks = chunk_file("big.py", big, "python")
    check_invariants(big, chunks)
    assert (chunks[0].kind, chunks[0].symbol) == ("class", "Big")
    assert all(", " not in (c.symbol or "") for c in chunks)


def test_small_members_merged_are_all_named(tiny_limits: None) -> None:
    """Two tiny methods of a class laid out member by member share a chunk: both named."""
    text = (
        "class Big:\n"
        + "".join(f"    field_{i}: int = {i}  # a documented field\n" for i in range(8))
        + "\n    def first(self):\n        return 1\n\n    def second(self):\n        return 2\n"
    )
    chunks = chunk_file("big.py", text, "python")
    check_invariants(text, chunks)
    last = chunks[-1]
    assert [d.qualname for d in last.defs] == ["Big.first", "Big.second"]
    assert (last.kind, last.symbol) == ("method", "Big.first, Big.second")


def test_many_merged_definitions_are_counted() -> None:
    """A run of tiny definitions merged into one chunk: the label names the first few
    and counts the rest; all of them stay in ``peers`` and the lexical index."""
    text = "\n\n".join(f"def f{i}():\n    pass" for i in range(9)) + "\n"
    chunks = chunk_file("m.py", text, "python")
    check_invariants(text, chunks)
    assert spans(chunks) == [(1, 26, "function", "f0, f1, f2, f3, f4, +4 more")]
    assert chunks[0].peers == [f"f{i}" for i in range(9)]
    assert chunks[0].index_names() == [f"f{i}" for i in range(9)]


def test_include_guard_and_namespace_name_nothing() -> None:
    """``#define X_H`` and a namespace's braces merged into a chunk add no name."""
    c_text = "#ifndef X_H\n#define X_H\nint f(int x)\n{\n    return x;\n}\n#endif\n"
    assert [c.symbol for c in chunk_file("x.h", c_text, "c")] == ["f"]
    cs_text = "namespace Shop\n{\n    public class A\n    {\n        int x;\n    }\n}\n"
    assert [c.symbol for c in chunk_file("a.cs", cs_text, "csharp")] == ["A"]


def test_markdown_labels_are_not_split() -> None:
    """Only definitions are listed: a heading holding ", " stays one name."""
    c = Chunk(1, 2, "section", "Install, configure", "# Install, configure\ntext")
    assert c.index_names() == ["Install, configure"]


def test_search_names_the_matched_definition(tmp_path: Path) -> None:
    """A query naming one of the definitions a chunk holds gets a hit labelled with it,
    anchored at its line; the symbol table has each definition at its own line."""
    from synth_repo import FakeEmbedder

    import scrydb

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / ".scry.toml").write_text("", encoding="utf-8")
    (repo / "pkg" / "errors.py").write_text(ERRORS_PY, encoding="utf-8")
    (repo / "pkg" / "bar.py").write_text(APPENDED_PY, encoding="utf-8")
    with scrydb.open(repo, db=tmp_path / "i.db", embedder=FakeEmbedder()) as ix:
        ix.sync()
        rows = ix.store.rows("SELECT name, kind, line FROM symbols ORDER BY name")
        assert sorted(rows) == sorted(
            [
                ("ConsoleError", "class", 4),
                ("MarkupError", "class", 8),
                ("StyleError", "class", 12),
                ("Bar", "class", 1),
                ("a", "method", 2),
                ("b", "method", 5),
                ("helper", "function", 9),
            ]
        )
        for query, path, kind, symbol, line in (
            ("MarkupError", "pkg/errors.py", "class", "MarkupError", 8),
            ("StyleError", "pkg/errors.py", "class", "StyleError", 12),
            ("helper", "pkg/bar.py", "function", "helper", 9),
        ):
            hit = ix.search(query, k=3)[0]
            assert (hit.path, hit.kind, hit.symbol) == (path, kind, symbol), query
            assert hit.anchor_line == line, query
        # A query that names none of them shows the chunk's own label.
        hit = next(h for h in ix.search("badly formatted markup", k=5) if h.path == "pkg/errors.py")
        assert hit.symbol == "ConsoleError, MarkupError, StyleError"


def test_derived_specs_differ_from_their_base_only_in_grammar() -> None:
    """CUDA is CPP and TSX is TypeScript over another grammar: derived, so a fix to the base
    reaches both (they were field-by-field copies that could drift)."""
    import dataclasses

    for derived, base in (("cuda", "cpp"), ("tsx", "typescript")):
        a, b = SPECS[derived], SPECS[base]
        differ = [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]
        assert differ == ["grammar"], (derived, differ)
    src = "__global__ void saxpy(int n, float a, float *x) {\n  x[0] = a;\n}\n"
    chunks = chunk_file("k.cu", src, "cuda")
    assert any(c.symbol == "saxpy" for c in chunks)
