// tests/lua/api_surface_test.cpp — docs/lua-api.md must not drift from the API a rule really sees.
//
// A rule enumerates, in a live sandbox, the globals, the standard library tables, `proflint` and
// `ctx` (fields and methods). The result must equal kSurface below, and every ctx/proflint entry
// must have a `### ` heading in docs/lua-api.md (every global and library a mention). Adding a
// function means adding it here and documenting it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

const char* const kSurface =
    "ctx.options ctx.summary ctx.trace_id ctx:below_threshold ctx:cpu_hotspots ctx:has ctx:host_waits ctx:kernel_origin "
    "ctx:log ctx:query ctx:report ctx:rows ctx:source "
    "global._G global._VERSION global.assert global.error global.getmetatable global.ipairs global.math global.next "
    "global.pairs global.pcall global.proflint global.rawequal global.rawget global.rawlen global.rawset global.select "
    "global.setmetatable global.string global.table global.tonumber global.tostring global.type global.utf8 "
    "global.xpcall "
    "math.abs math.acos math.asin math.atan math.atan2 math.ceil math.cos math.cosh math.deg math.exp math.floor "
    "math.fmod math.frexp math.huge math.ldexp math.log math.log10 math.max math.maxinteger math.min "
    "math.mininteger math.modf math.pi math.pow math.rad math.random math.randomseed math.sin math.sinh math.sqrt "
    "math.tan math.tanh math.tointeger math.type math.ult "
    "proflint.category proflint.dtype proflint.dtypes proflint.format_bytes proflint.format_ns "
    "proflint.format_percent proflint.intersect proflint.shapes proflint.total proflint.triton_kind proflint.union "
    "proflint.uses_tensor_cores "
    "string.byte string.char string.find string.format string.gmatch string.gsub string.len string.lower "
    "string.match string.pack string.packsize string.rep string.reverse string.sub string.unpack string.upper "
    "table.concat table.insert table.move table.pack table.remove table.sort table.unpack "
    "utf8.char utf8.charpattern utf8.codepoint utf8.codes utf8.len utf8.offset";

const char* const kEnumerate = R"(
    local names = {}
    local function add(prefix, t)
      local k = next(t)
      while k ~= nil do
        names[#names + 1] = prefix .. k
        k = next(t, k)
      end
    end
    add('global.', _G)
    for _, lib in ipairs({ 'math', 'proflint', 'string', 'table', 'utf8' }) do add(lib .. '.', _G[lib]) end
    add('ctx.', ctx)
    add('ctx:', getmetatable(ctx).__index)
    table.sort(names)
    ctx:report{ problem = table.concat(names, ' ') })";

}  // namespace

TEST(LuaApiSurface, MatchesTheListAndTheDocs) {
  auto r = run_rules(sample_store(), {rule("rules/surface.lua", rule_text("surface", kEnumerate))});
  auto f = with_id(r, "surface");
  ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem);
  EXPECT_EQ(f[0].problem, kSurface) << "the sandbox's API changed: update kSurface and docs/lua-api.md";

  std::ifstream in(source_dir() / "docs" / "lua-api.md");
  ASSERT_TRUE(in) << "docs/lua-api.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string doc = ss.str();
  std::istringstream words(kSurface);
  for (std::string name; words >> name;) {
    if (name.rfind("ctx", 0) == 0 || name.rfind("proflint.", 0) == 0) {
      EXPECT_NE(doc.find("\n### `" + name), std::string::npos)
          << "docs/lua-api.md needs a heading ### `" << name << "...`";
    } else {
      std::string bare = name.substr(name.find('.') + 1);
      EXPECT_NE(doc.find("`" + bare + "`"), std::string::npos) << "docs/lua-api.md does not mention `" << bare << "`";
    }
  }
}
