#include "policy/undo_plan.h"

#include <set>

namespace cordon::policy {
namespace {

std::string& KeyOf(auto& node) {
  if constexpr (requires { node.key(); }) {
    return node.key();
  } else {
    return node.value();
  }
}

// Every key of the set or map `c` at or beneath `from` (a directory moved)
// goes to the same place beneath `to`, its value with it.
template <class C>
void RelocateKeys(C& c, const std::string& from, const std::string& to) {
  C moved;
  for (auto it = c.lower_bound(from); it != c.end();) {
    auto node = c.extract(it++);
    std::string& key = KeyOf(node);
    if (key.compare(0, from.size(), from) != 0) {
      c.insert(std::move(node));
      break;
    }
    if (key.size() == from.size() || key[from.size()] == '/') {
      key = to + key.substr(from.size());
      moved.insert(std::move(node));
    } else {
      it = c.insert(std::move(node)).position;
      ++it;
    }
  }
  for (auto it = moved.begin(); it != moved.end();) {
    auto node = moved.extract(it++);
    auto r = c.insert(std::move(node));
    if (!r.inserted) {  // a key there already: the moved entry takes its place
      c.erase(r.position);
      c.insert(std::move(r.node));
    }
  }
}

// A name as the plan sees it while it walks back: an entry (`ghost`: gone
// already, moved and removed in the plan only), or nothing.
struct Node {
  bool present = false;
  bool ghost = false;
  std::uint64_t ino = 0;
};

class Planner {
 public:
  Planner(const std::optional<NameStates>& at_end, const NameStates& now) {
    for (const auto& [path, o] : now) view_[path] = {o.present, false, o.ino};
    if (!at_end) return;
    for (const auto& [path, end] : *at_end) {
      auto it = now.find(path);
      const Observed cur = it == now.end() ? Observed{} : it->second;
      if (end.present && !cur.present) {
        view_[path] = {true, true, end.ino};  // the user removed the run's entry
      } else if (cur.present && (!end.present || cur.ino != end.ino || cur.size != end.size ||
                                 cur.mtime_ns != end.mtime_ns)) {
        changed_.insert(path);
      }
    }
  }

  void Back(const Change& c) {
    switch (c.op) {
      case ChangeOp::kDrop: return BackDrop(c);
      case ChangeOp::kCreate: return BackCreate(c);
      case ChangeOp::kMove: return BackMove(c);
      case ChangeOp::kSave: return BackSave(c);
      case ChangeOp::kCopy: return BackCopy(c);
      case ChangeOp::kSwap: return BackSwap(c);
      case ChangeOp::kAttr: return BackAttr(c);
    }
  }

  UndoPlan Take() { return std::move(plan_); }

 private:
  void Conflict(const std::string& path, std::string why, std::optional<std::uint64_t> slot = {}) {
    for (UndoConflict& c : plan_.conflicts) {
      if (c.path == path) {
        if (!c.slot) c.slot = slot;
        return;
      }
    }
    plan_.conflicts.push_back({path, std::move(why), slot});
  }
  // Whether the entry at `path` is the run's `ino`, untouched since; a
  // conflict otherwise.
  bool Holds(const std::string& path, std::uint64_t ino, std::optional<std::uint64_t> slot = {}) {
    const Node& n = view_[path];
    if (changed_.count(path) && !n.ghost) {
      Conflict(path, "changed after the run", slot);
      return false;
    }
    if (!n.present || n.ino != ino) {
      Conflict(path, n.present ? "another entry there" : "missing", slot);
      return false;
    }
    return true;
  }
  bool Free(const std::string& path, std::optional<std::uint64_t> slot = {}) {
    const Node& n = view_[path];
    if (!n.present || n.ghost) return true;
    Conflict(path, changed_.count(path) ? "changed after the run" : "another entry there", slot);
    return false;
  }

  void BackDrop(const Change& c) {
    if (Free(c.path)) view_[c.path] = {true, true, c.ino};
  }
  void BackCreate(const Change& c) {
    if (!Holds(c.path, c.ino)) return;
    if (!view_[c.path].ghost) plan_.steps.push_back({UndoAct::kRemove, c.path, {}, c.ino, 0, c.type});
    view_[c.path] = {};
  }
  // What the view and the changed names hold at or beneath `from` now lies
  // at or beneath `to` (a directory moved back carries its entries).
  void Relocate(const std::string& from, const std::string& to) {
    RelocateKeys(view_, from, to);
    RelocateKeys(changed_, from, to);
  }

  void BackMove(const Change& c) {
    if (!Holds(c.to, c.ino) || !Free(c.path)) return;
    Node n = view_[c.to];
    if (!n.ghost) plan_.steps.push_back({UndoAct::kMove, c.to, c.path, c.ino, 0, c.type});
    if (c.type == KeptType::kDir) {
      Relocate(c.to, c.path);
    } else {
      view_[c.to] = {};
      view_[c.path] = n;
    }
  }
  void BackSave(const Change& c) {
    if (!Free(c.path, c.slot)) return;
    plan_.steps.push_back({UndoAct::kRestore, c.path, {}, c.ino, c.slot, c.type});
    view_[c.path] = {true, false, c.ino};
    changed_.erase(c.path);
  }
  void BackCopy(const Change& c) {
    if (!Holds(c.path, c.ino, c.slot)) return;
    if (view_[c.path].ghost) return Conflict(c.path, "missing", c.slot);
    plan_.steps.push_back({UndoAct::kPutCopy, c.path, {}, c.ino, c.slot, c.type});
  }

  // The old value back on the same entry, where the walk back has put it
  // (a rename after the change is taken back first); an entry changed since
  // the run, or another there, keeps what it has.
  void BackAttr(const Change& c) {
    const std::size_t before = plan_.conflicts.size();
    const bool held = Holds(c.path, c.ino);
    if (held && view_[c.path].ghost) Conflict(c.path, "missing");
    if (plan_.conflicts.size() > before) {
      plan_.conflicts.back().why += ": " + OldAttrText(c.attr) + " not set back";
    }
    if (!held || view_[c.path].ghost) return;
    UndoStep s{UndoAct::kSetAttr, c.path, {}, c.ino, 0, c.type};
    s.dev = c.dev;
    s.attr = c.attr;
    plan_.steps.push_back(std::move(s));
  }

  void BackSwap(const Change& c) {
    if (!Holds(c.to, c.ino) || !Holds(c.path, c.other_ino)) return;
    Node a = view_[c.path], b = view_[c.to];
    if (!a.ghost || !b.ghost) {
      if (a.ghost || b.ghost) return Conflict(a.ghost ? c.path : c.to, "missing");
      UndoStep s{UndoAct::kSwap, c.path, c.to, c.ino, 0, c.type};
      s.other_ino = c.other_ino;
      plan_.steps.push_back(s);
    }
    const std::string tmp(1, '\0');
    Relocate(c.path, tmp);
    Relocate(c.to, c.path);
    Relocate(tmp, c.to);
  }

  std::map<std::string, Node> view_;
  std::set<std::string> changed_;
  UndoPlan plan_;
};

}  // namespace

bool AtOrBeneath(const std::string& path, const std::string& dir) {
  return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

void NameTracker::Relocate(const std::string& from, const std::string& to) {
  RelocateKeys(names_, from, to);
}

void NameTracker::Apply(const Change& c) {
  names_.insert(c.path);
  if (c.op == ChangeOp::kMove) {
    if (c.type == KeptType::kDir) Relocate(c.path, c.to);
    names_.insert(c.to);
  } else if (c.op == ChangeOp::kSwap) {
    // Through a name no path can take ("\0" is in none).
    const std::string tmp = std::string(1, '\0');
    Relocate(c.path, tmp);
    Relocate(c.to, c.path);
    Relocate(tmp, c.to);
    names_.insert(c.to);
  }
}

std::vector<std::string> NamesOf(const std::vector<Change>& changes) {
  NameTracker t;
  for (const Change& c : changes) t.Apply(c);
  return {t.names().begin(), t.names().end()};
}

UndoPlan PlanUndo(const std::vector<Change>& changes, const std::optional<NameStates>& at_end,
                  const NameStates& now) {
  Planner p(at_end, now);
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) p.Back(*it);
  return p.Take();
}

}  // namespace cordon::policy
