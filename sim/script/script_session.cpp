#include "sim/script/script_session.hpp"

#include <utility>

#include "configs/object_reader.hpp"

namespace meshsim::script {

using nlohmann::json;

Expected<std::unique_ptr<ScriptSession>> ScriptSession::create(const json& setup, const std::string& name,
                                                               StateStore* states) {
  if (auto checked = check_keys(setup, name, false); !checked) return checked.error();
  try {
    return std::unique_ptr<ScriptSession>(new ScriptSession(setup, name, states));
  } catch (const ScriptError& e) {
    return Error{e.message};
  }
}

Status ScriptSession::check_keys(const json& script, const std::string& name, bool steps) {
  const std::string expected = std::string("nodes, serving, scaling") + (steps ? ", steps" : "") + ", comment";
  if (!script.is_object()) return Error{name + ": expected an object with " + expected};
  for (const auto& [key, value] : script.items()) {
    const bool known = key == "nodes" || key == "comment" || key == "serving" || key == "scaling";
    if (known || (key == "steps" && steps)) continue;
    return Error{name + ": " + key + ": unknown key (expected " + expected + ")"};
  }
  return Ok();
}

Expected<ScriptSession::Step> ScriptSession::parse(std::size_t index, const json& step, const std::string& where) {
  const std::string& file = world_.file;
  if (!step.is_object() || !step.contains("call") || !step["call"].is_string()) {
    return Error{file + ": " + where + ": expected {\"call\": NAME, \"args\": {...}}"};
  }
  const std::string call = step["call"].get<std::string>();
  for (const auto& [key, value] : step.items()) {
    if (key != "call" && key != "args" && key != "comment" && key != "name" && key != "expect" &&
        key != "expect_time") {
      return Error{file + ": " + where + "." + key +
                   ": unknown key (expected call, args, name, expect, expect_time, comment)"};
    }
  }
  if (step.contains("name") && !step["name"].is_string()) return Error{file + ": " + where + ".name: expected a string"};
  if (step.contains("expect") && !step["expect"].is_object()) {
    return Error{file + ": " + where + ".expect: expected an object (what the result must contain)"};
  }
  if (step.contains("expect_time") && !step["expect_time"].is_number()) {
    return Error{file + ": " + where + ".expect_time: expected a number of seconds"};
  }
  const json empty = json::object();
  const json& args_json = step.contains("args") ? step["args"] : empty;
  if (!args_json.is_object()) return Error{file + ": " + where + ".args: expected an object"};
  const CallSpec* spec = find_call(call);
  if (spec == nullptr) {
    std::string names;
    for (const CallSpec& known : script_calls()) names += (names.empty() ? "" : ", ") + std::string(known.name);
    return Error{file + ": " + where + ".call: unknown call '" + call + "'; expected one of " + names};
  }
  if (spec->serving && !world_.serving) {
    return Error{file + ": " + where + ".call: '" + call +
                 "' acts on serving instances: the script needs a \"serving\" object"};
  }
  configs::ConfigErrors errors(file);
  configs::ObjectReader args(&args_json, where + ".args", errors);
  Action action = spec->parse(world_, args);
  args.finish();
  if (!errors.empty()) return Error{errors.to_string()};
  return Step{[this, index, call, action = std::move(action), name = step.value("name", json())] {
    json line{{"step", index}, {"call", call}, {"result", action()}, {"time", world_.clock.now_s()}};
    if (!name.is_null()) line["name"] = name;
    return line;
  }};
}

Expected<json> ScriptSession::call(const std::string& name, const json& args) {
  auto step = parse(calls_, json{{"call", name}, {"args", args}}, name);
  if (!step) return step.error();
  ++calls_;
  return step->run()["result"];
}

}  // namespace meshsim::script
