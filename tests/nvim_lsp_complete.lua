-- Neovim (0.7+) as the editor of tests/lsp_test.py: starts `code-t5 lsp` with the built-in client,
-- edits a Python buffer for real (nvim_buf_set_lines, nvim_buf_set_text and typed keys, so the
-- client sends its own incremental didChange ranges in UTF-16), asks for completion at the end of
-- the last line, and writes as JSON what the editor received, what the buffer holds, and every
-- notification the client sent (didOpen, the didChange ranges), for the test to replay.
--
--   nvim --headless -u NONE -c "luafile tests/nvim_lsp_complete.lua"
-- Environment: CODE_T5_LSP_CMD (the server command, a JSON list), CODE_T5_LSP_FILE (the buffer's
-- file name; the file need not exist), CODE_T5_LSP_OUT (where the JSON goes).

local out_path = os.getenv("CODE_T5_LSP_OUT")
local report = { steps = {}, sent = {} }

local function step(name)
  table.insert(report.steps, name)
end

local function main()
  local cmd = vim.fn.json_decode(os.getenv("CODE_T5_LSP_CMD"))
  local path = os.getenv("CODE_T5_LSP_FILE")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_name(buf, path)
  vim.bo[buf].filetype = "python"
  vim.o.autoindent = false -- typed lines hold exactly the keys typed
  -- What didOpen carries: a non-BMP character (2 UTF-16 code units) early in the file.
  vim.api.nvim_buf_set_lines(buf, 0, -1, true, { "import os", "", 'GREETING = "😀 hi"' })

  local client_id = vim.lsp.start_client({
    name = "code-t5",
    cmd = cmd,
    root_dir = vim.fn.fnamemodify(path, ":h"),
    on_exit = function(code, signal)
      report.server_exit = { code = code, signal = signal }
    end,
  })
  assert(client_id, "vim.lsp.start_client failed")
  local client = vim.lsp.get_client_by_id(client_id)
  local notify = client.notify -- didOpen and didChange go through it
  client.notify = function(method, params)
    table.insert(report.sent, { method = method, params = params })
    return notify(method, params)
  end
  vim.lsp.buf_attach_client(buf, client_id)
  assert(vim.wait(120000, function() return client.initialized end, 20),
    "the server did not answer initialize in 120 s")
  step("initialized")
  report.server_capabilities = client.server_capabilities

  -- Edits after didOpen: each reaches the server as an incremental didChange.
  -- 1. After the emoji on line 3: UTF-16 columns differ from characters and bytes there.
  local greeting = vim.api.nvim_buf_get_lines(buf, 2, 3, true)[1]
  local hi = greeting:find(" hi", 1, true) -- byte index of " hi"
  vim.api.nvim_buf_set_text(buf, 2, hi + 2, 2, hi + 2, { " there" })
  -- 2. Whole lines appended.
  vim.api.nvim_buf_set_lines(buf, -1, -1, true, { "", "", "def read_lines(path):" })
  -- 3. Typed: a new line in insert mode, character by character.
  vim.api.nvim_win_set_cursor(0, { vim.api.nvim_buf_line_count(buf), 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(
    'o    """The lines of path 😀."""<CR>    with open(path) as f:<CR>        print("😀", f.rea<Esc>',
    true, false, true), "xt", false)
  -- 4. A deletion spanning a line break: line 2 (empty) joined away, then put back.
  vim.api.nvim_buf_set_text(buf, 0, 9, 1, 0, {})
  vim.api.nvim_buf_set_text(buf, 0, 9, 0, 9, { "", "" })
  step("edited")

  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, true)
  local last = lines[#lines]
  -- The cursor at the end of the last line, after an emoji: in UTF-16 code units, as LSP wants.
  local _, utf16 = vim.str_utfindex(last)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = #lines - 1, character = utf16 },
    context = { triggerKind = 1 },
  }
  local results, err = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 60000)
  assert(results, "no completion reply: " .. tostring(err))
  step("completed")
  report.lines = lines
  report.position = params.position
  report.response = results[client_id]

  -- A position outside the document: answered (empty), and the server still answers after it.
  local outside = vim.deepcopy(params)
  outside.position = { line = #lines + 5, character = 0 }
  report.outside = (vim.lsp.buf_request_sync(buf, "textDocument/completion", outside, 30000)
    or {})[client_id]
  report.again = (vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 30000)
    or {})[client_id]

  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return report.server_exit ~= nil end, 20)
  step("stopped")
end

local ok, err = pcall(main)
if not ok then
  report.error = tostring(err)
end
local file = assert(io.open(out_path, "w"))
file:write(vim.fn.json_encode(report))
file:close()
vim.cmd("qa!")
