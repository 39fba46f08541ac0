// The lane image: the schedule's forms and the lowering's kernel calls written as records a resident host reads, each
// parameter laid out in bytes as the kernel takes it, its pointers left as places the host resolves.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "compiler/digest.hpp"
#include "compiler/error.hpp"
#include "compiler/lane_image.hpp"
#include "compiler/lane_output.hpp"
#include "compiler/lane_schedule.hpp"
#include "compiler/lowering.hpp"
#include "compiler/version.hpp"
#include "kernels/embedded.hpp"
#include "kernels/shapes.cuh"
#include "program.hpp"

namespace lt::lane {

namespace {

// A matrix format's name in the weights manifest: ggml's ("q8_0", "f16", "q4_k", ...).
std::string type_name(ggml::Type t) {
  return std::string(ggml::traits_of(t).name);
}

// Indices of the schedule's names in the image's tables.
struct Tables {
  std::map<std::string, size_t> matrices, vectors, side, carried;
  std::map<std::string, ggml::Type> types;
};

// A scalar of a parameter at a byte offset: its record letter (i, f, d or p) and the words after the offset.
struct Item {
  char kind;
  size_t offset;
  std::string value;
};

// One parameter laid out: its size, alignment and scalars.
struct Layout {
  size_t size = 0, align = 1;
  std::vector<Item> items;
};

class ParamWriter {
 public:
  ParamWriter(const Schedule& p, const Form& f, const Tables& t) : p_(p), f_(f), t_(t) {}

  Layout layout(const Arg& a) const {
    Layout l;
    add(a, l);
    l.size = round_up(l.size, l.align);
    return l;
  }

 private:
  static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

  static void item(Layout& l, size_t bytes, char kind, const std::string& value) {
    const size_t at = round_up(l.size, bytes);
    l.items.push_back({kind, at, value});
    l.size = at + bytes;
    l.align = std::max(l.align, bytes);
  }

  std::string place(const Place& pl) const {
    auto index = [&](const std::map<std::string, size_t>& m) {
      auto it = m.find(pl.name);
      if (it == m.end()) throw Error("the lane image has no table entry for " + pl.name);
      return it->second;
    };
    switch (pl.space) {
      case Place::Space::Null:
        return "n 0 0";
      case Place::Space::Vector:
        return "v " + std::to_string(index(t_.vectors)) + " " + std::to_string(pl.offset * 4);
      case Place::Space::Side:
        return "S " + std::to_string(index(t_.side)) + " " + std::to_string(pl.offset * p_.act_bytes());
      case Place::Space::Carried: {
        return "c " + std::to_string(index(t_.carried)) + " " +
               std::to_string(pl.offset * p_.elem_bytes(p_.carried.at(pl.name).elem));
      }
      case Place::Space::Step: {
        return "a 0 " +
               std::to_string(f_.slots.at(pl.name).offset + pl.offset * p_.elem_bytes(f_.buffers.at(pl.name).elem));
      }
    }
    return {};
  }

  void add(const Arg& a, Layout& l) const {
    switch (a.kind) {
      case Arg::Kind::Pointer:
        item(l, 8, 'p', place(a.place));
        return;
      case Arg::Kind::Int:
        item(l, 4, 'i', std::to_string(int32_t(a.i)));
        return;
      case Arg::Kind::Float: {
        const float v = float(a.f);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        item(l, 4, 'f', std::to_string(bits));
        return;
      }
      case Arg::Kind::Double: {
        uint64_t bits;
        std::memcpy(&bits, &a.f, 8);
        item(l, 8, 'd', std::to_string(bits));
        return;
      }
      case Arg::Kind::Matrix: {
        const size_t i = t_.matrices.at(a.matrix);
        const std::string n = " " + std::to_string(i) + " 0";
        const ggml::Type type = t_.types.at(a.matrix);
        if (type == ggml::Type::Q8_0) {
          item(l, 8, 'p', "q" + n);
          item(l, 8, 'p', "s" + n);
        } else if (lk_is_block(int(type))) {  // lk_blk's planes, those the format lacks null
          for (int plane = 0; plane < 4; ++plane)
            item(l, 8, 'p', lk_plane_bytes(int(type), plane, 256) ? std::string(1, "qhsd"[plane]) + n : "n 0 0");
        } else {
          item(l, 8, 'p', "w" + n);
        }
        return;
      }
      case Arg::Kind::Aggregate: {
        // A member aggregate starts at its own alignment and ends padded to it, as C lays out structs and arrays.
        Layout inner;
        for (const Arg& m : a.members) add(m, inner);
        inner.size = round_up(inner.size, inner.align);
        const size_t at = round_up(l.size, inner.align);
        for (Item& x : inner.items) l.items.push_back({x.kind, at + x.offset, std::move(x.value)});
        l.size = at + inner.size;
        l.align = std::max(l.align, inner.align);
        return;
      }
    }
  }

  const Schedule& p_;
  const Form& f_;
  const Tables& t_;
};

}  // namespace

std::string weights_manifest(const gguf::File& file, const model::Model& m) {
  const Schedule p = schedule(file, m, knobs::Knobs{}, knobs::Target{});
  std::ostringstream o;
  o << "LANE_WEIGHTS 1\ncheckpoint " << file.size() << " " << file.data_start() << " " << file.digest() << "\n";
  for (const Matrix& w : p.matrices)
    o << "matrix " << w.name << " " << type_name(w.type) << " " << w.rows << " " << w.cols << " "
      << file.data_start() + w.tensor->offset << "\n";
  for (const Vector& v : p.vectors)
    o << "vector " << v.name << " " << v.n << " " << file.data_start() + v.tensor->offset << "\n";
  return o.str();
}

std::string resident_source() {
  return std::string("// The resident host of lane-tune ") + version() + " (kernels/resident.cuh).\n" +
         program_head(knobs::Knobs{}) + "#define LK_CONTRACT " + std::to_string(kContractVersion) + "\n" +
         resident_library() + std::string(kernels::source("resident.cuh"));
}

std::string shared_module_source(const std::string& head, const std::vector<std::string>& instances) {
  if (instances.empty()) throw Error("a kernel module holds at least one kernel instance");
  LibraryParts parts;
  for (const std::string& instance : instances) parts.need(instance);
  std::string s =
      std::string("// A kernel module of lane-tune ") + version() + ": " +
      (instances.size() == 1 ? "the instance " + instances[0] : std::to_string(instances.size()) + " instances") +
      " of the kernel library.\n" + head + parts.switches() + device_library() +
      (instances.size() == 1 ? "\n// The instance this module holds.\n" : "\n// The instances this module holds.\n");
  // (taken by address in host variables: device code that took them would change their machine code)
  for (size_t i = 0; i < instances.size(); ++i)
    s += "void* lk_instance" + (i ? std::to_string(i) : std::string()) + " = (void*)&" + instances[i] + ";\n";
  return s;
}

std::string module_source(const std::string& head, const std::string& instance) {
  return shared_module_source(head, {instance});
}

std::string module_library(const std::string& instance) {
  LibraryParts parts;
  parts.need(instance);
  return parts.switches();
}

namespace {

// Text without spaces.
std::string squeeze(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

// The top-level comma-separated parts of `s` (commas inside <> or () belong to their part).
std::vector<std::string> top_level_parts(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') ++depth;
    if (s[i] == '>' || s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) {
      out.emplace_back(s.substr(from, i - from));
      from = i + 1;
    }
  }
  out.emplace_back(s.substr(from));
  return out;
}

// A kernel's name and template arguments: from an instance ("lk_gemv<lk_blk<LK_Q4_K>, 2, 1>") or a demangled symbol
// ("void lk_gemv<lk_blk<12>, 2, 1, lk_xq, 4>(lk_blk<12>, ...)"; a kernel that is no template has no return type
// there: "lk_swiglu(float const*, ...)"). Empty name where the text is neither.
struct Named {
  std::string name;
  std::vector<std::string> args;
  bool templated = false;
};

Named named(std::string_view s) {
  if (s.substr(0, 5) == "void ") s.remove_prefix(5);
  const size_t open = s.find_first_of("<(");
  Named n;
  n.name = squeeze(s.substr(0, open));
  if (open == std::string_view::npos || s[open] == '(') return n;
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    if (s[i] == '>' && --depth == 0) {
      n.args = top_level_parts(s.substr(open + 1, i - open - 1));
      n.templated = true;
      return n;
    }
  }
  return {};
}

// An instance's template argument in the demangler's spelling, spaces removed: the library's format macros as their
// numbers (LK_Q4_K: 12, as kernels/shapes.cuh defines them: ggml's type ids), lk_act and lk_acc as `act`, and a
// pointer to const as `T const*`.
std::string demangled_spelling(std::string arg, const std::string& act) {
  std::string out;
  for (size_t i = 0; i < arg.size();) {
    if (std::isalpha(static_cast<unsigned char>(arg[i])) || arg[i] == '_') {
      size_t j = i;
      while (j < arg.size() && (std::isalnum(static_cast<unsigned char>(arg[j])) || arg[j] == '_')) ++j;
      std::string word = arg.substr(i, j - i);
      if (word == "lk_act" || word == "lk_acc") {
        word = act;
      } else if (word.rfind("LK_", 0) == 0) {
        if (auto t = ggml::parse_type(word.substr(3))) word = std::to_string(static_cast<uint32_t>(*t));
      }
      out += word;
      i = j;
    } else {
      out += arg[i++];
    }
  }
  out = squeeze(out);
  if (out.rfind("const", 0) == 0 && out.size() > 5 && out.back() == '*') out = out.substr(5, out.size() - 6) + "const*";
  return out;
}

}  // namespace

std::vector<std::string> instance_symbols(const std::string& head, const std::vector<std::string>& instances,
                                          const std::vector<std::pair<std::string, std::string>>& symbols) {
  const std::string act = head.find("typedef double lk_act;") != std::string::npos ? "double" : "float";
  std::vector<Named> kernels;
  for (const auto& [mangled, demangled] : symbols) {
    Named k = named(demangled);
    for (std::string& a : k.args) a = squeeze(a);
    kernels.push_back(std::move(k));
  }
  std::vector<std::string> out;
  for (const std::string& instance : instances) {
    Named want = named(instance);
    for (std::string& a : want.args) a = demangled_spelling(a, act);
    const std::string* found = nullptr;
    int matches = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      const Named& k = kernels[i];
      if (k.name != want.name || k.templated != want.templated || k.args.size() < want.args.size()) continue;
      // The instance's arguments, the rest of the kernel's being its template's defaults.
      if (!std::equal(want.args.begin(), want.args.end(), k.args.begin())) continue;
      found = &symbols[i].first;
      ++matches;
    }
    out.push_back(matches == 1 && !want.name.empty() ? *found : std::string());
  }
  return out;
}

Image image(const gguf::File& file, const model::Model& m, const knobs::Knobs& k, const knobs::Target& t) {
  const Schedule p = schedule(file, m, k, t);
  const std::string manifest = weights_manifest(file, m);
  Tables tables;
  for (size_t i = 0; i < p.matrices.size(); ++i) {
    tables.matrices[p.matrices[i].name] = i;
    tables.types[p.matrices[i].name] = p.matrices[i].type;
  }
  for (size_t i = 0; i < p.vectors.size(); ++i) tables.vectors[p.vectors[i].name] = i;
  for (size_t i = 0; i < p.side.size(); ++i) tables.side[p.side[i].name] = i;
  {
    size_t i = 0;
    for (const auto& [name, b] : p.carried) tables.carried[name] = i++;
  }

  Image img;
  img.head = module_head(k, &m);
  img.sidecar = p.sidecar;
  std::ostringstream head;
  head << "LANE_IMAGE " << kImageVersion << "\n"
       << "weights " << hex64(XXH64(manifest.data(), manifest.size(), 0)) << "\n"
       << "act_bytes " << p.act_bytes() << "\nvocab " << m.vocab << "\nctx " << p.ctx << "\n"
       << "graphs " << (k.cuda_graphs ? 1 : 0) << "\nside_streams " << (k.side_streams ? 1 : 0) << "\n"
       << "pdl " << (k.pdl ? 1 : 0) << "\n"
       << "sidecar " << p.sidecar.size() << " " << hex64(XXH64(p.sidecar.data(), p.sidecar.size(), 0)) << "\n"
       << "side " << p.side.size() << "\n";
  for (const SideArray& s : p.side) head << s.name << " " << s.offset << " " << s.count << "\n";
  head << "carried " << p.carried.size() << "\n";
  for (const auto& [name, b] : p.carried) head << name << " " << p.bytes_of(b) << "\n";
  head << "arena " << p.arena_bytes << "\n";
  img.before_kernels = head.str();

  std::vector<std::vector<std::vector<KernelCall>>> calls;
  std::map<std::string, size_t> kernel_index;
  std::ostringstream body;
  body << "forms " << p.forms.size() << "\n";
  for (const Form& f : p.forms) {
    calls.emplace_back();
    body << "form " << f.rows << " " << tables.carried.at(f.token) << " " << f.slots.at(f.logits).offset << " "
         << f.launches.size() << "\n";
    const ParamWriter writer(p, f, tables);
    for (size_t i = 0; i < f.launches.size(); ++i) {
      const Launch& l = f.launches[i];
      const auto [first, last] = group_of(f, int(i));
      int sides = 0;
      for (int j = first; j <= last; ++j) sides = std::max(sides, f.launches[j].stream);
      calls.back().push_back(lower(p, f, l));
      const std::vector<KernelCall>& cs = calls.back().back();
      body << "launch " << l.stream << " " << (int(i) == first ? sides : 0) << " " << (int(i) == last ? sides : 0)
           << " " << cs.size() << " " << l.kind << " " << l.output << "\n";
      for (const KernelCall& c : cs) {
        const std::string inst = c.instance();
        auto [it, fresh] = kernel_index.try_emplace(inst, img.kernels.size());
        if (fresh) img.kernels.push_back(inst);
        body << "call " << it->second;
        for (unsigned v : c.grid.v) body << " " << v;
        for (unsigned v : c.block.v) body << " " << v;
        body << " " << c.smem << " " << c.params.size() << "\n";
        for (const Arg& a : c.params) {
          const Layout lay = writer.layout(a);
          body << "param " << lay.size << " " << lay.align << " " << lay.items.size();
          for (const Item& x : lay.items) body << " " << x.kind << " " << x.offset << " " << x.value;
          body << "\n";
        }
      }
    }
  }
  img.after_kernels = body.str();
  img.smem.assign(img.kernels.size(), 0);
  for (const auto& [inst, smem] : large_smem(calls)) img.smem[kernel_index.at(inst)] = smem;
  img.description = {{"model", m.name},        {"architecture", m.architecture}, {"knobs", k.to_json()},
                     {"context", p.ctx},       {"kernels", img.kernels.size()},  {"arena_bytes", p.arena_bytes},
                     {"image", kImageVersion}, {"lane_tune", version()}};
  return img;
}

std::string image_text(const Image& img, const std::vector<Module>& modules) {
  if (modules.size() != img.kernels.size())
    throw Error("the image calls " + std::to_string(img.kernels.size()) + " kernels; " +
                std::to_string(modules.size()) + " modules were given");
  std::ostringstream o;
  o << img.before_kernels << "kernels " << img.kernels.size() << "\n";
  for (size_t i = 0; i < modules.size(); ++i) {
    if (modules[i].symbol.empty() || modules[i].symbol.find(' ') != std::string::npos)
      throw Error("kernel module " + modules[i].path + " names no usable symbol for " + img.kernels[i]);
    o << i << " " << img.smem[i] << " " << modules[i].symbol << " " << modules[i].path << "\n";
  }
  o << img.after_kernels;
  return o.str();
}

}  // namespace lt::lane
