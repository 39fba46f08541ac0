// deploy/ checked offline: the Kubernetes base parses and its objects name each other consistently (names, ports,
// labels, the Secret, the image, the user), the container file is the one the manifests expect, and the systemd
// units run as the user sysusers.d makes.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace lt::test {
namespace {

const std::filesystem::path kDeploy = std::filesystem::path(LT_SOURCE_DIR) / "deploy";

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of `--name=value` among a container's args; "" when absent.
std::string arg(const YAML::Node& container, const std::string& name) {
  for (const auto& a : container["args"]) {
    const auto text = a.as<std::string>();
    if (text.rfind(name + "=", 0) == 0) return text.substr(name.size() + 1);
  }
  return "";
}

// The port of host:port.
int port_of(const std::string& address) {
  return std::stoi(address.substr(address.rfind(':') + 1));
}

// The kustomize base: the kustomization and every object of the files it lists, by kind and name.
struct Base {
  YAML::Node kustomization;
  std::map<std::pair<std::string, std::string>, YAML::Node> objects;

  Base() {
    kustomization = YAML::LoadFile((kDeploy / "kubernetes" / "kustomization.yaml").string());
    for (const auto& r : kustomization["resources"])
      for (const auto& doc : YAML::LoadAllFromFile((kDeploy / "kubernetes" / r.as<std::string>()).string()))
        objects[{doc["kind"].as<std::string>(), doc["metadata"]["name"].as<std::string>()}] = doc;
  }
  YAML::Node get(const std::string& kind, const std::string& name) const {
    auto it = objects.find({kind, name});
    if (it == objects.end()) {
      ADD_FAILURE() << "no " << kind << " " << name << " in the base";
      return YAML::Node();
    }
    return it->second;
  }
  // Each workload's pod spec: StatefulSets', Deployments' and CronJobs' templates.
  std::vector<std::pair<std::string, YAML::Node>> pods() const {
    std::vector<std::pair<std::string, YAML::Node>> v;
    for (const auto& [key, o] : objects) {
      if (key.first == "StatefulSet" || key.first == "Deployment") v.emplace_back(key.second, o["spec"]["template"]);
      if (key.first == "CronJob") v.emplace_back(key.second, o["spec"]["jobTemplate"]["spec"]["template"]);
    }
    return v;
  }
};

// The numeric user the container file switches to.
int container_uid() {
  std::smatch m;
  const std::string text = read_text(kDeploy / "Containerfile");
  if (!std::regex_search(text, m, std::regex(R"(\nUSER (\d+):(\d+)\n)"))) return -1;
  return std::stoi(m[1]);
}

TEST(DeployKubernetes, TheBaseListsEveryManifestAndEachParses) {
  Base b;
  std::set<std::string> listed;
  for (const auto& r : b.kustomization["resources"]) listed.insert(r.as<std::string>());
  for (const auto& e : std::filesystem::directory_iterator(kDeploy / "kubernetes"))
    if (e.path().filename() != "kustomization.yaml") {
      EXPECT_TRUE(listed.count(e.path().filename().string())) << e.path() << " is not in kustomization.yaml";
    }
  for (const char* kind : {"Namespace", "Secret", "Service", "StatefulSet", "Deployment", "CronJob"}) {
    bool found = false;
    for (const auto& [key, o] : b.objects) found |= key.first == kind;
    EXPECT_TRUE(found) << "no " << kind;
  }
  // Every object lands in the base's namespace: the one it creates.
  const auto ns = b.kustomization["namespace"].as<std::string>();
  EXPECT_TRUE(b.get("Namespace", ns)) << "the base's namespace is not created";
  for (const auto& [key, o] : b.objects)
    if (o["metadata"]["namespace"]) {
      EXPECT_EQ(o["metadata"]["namespace"].as<std::string>(), ns) << key.second;
    }
  EXPECT_EQ(b.get("Namespace", ns)["metadata"]["labels"]["pod-security.kubernetes.io/enforce"].as<std::string>(),
            "restricted");
}

TEST(DeployKubernetes, EveryPodRunsAsTheImagesNumericNonRootUserWithoutPrivileges) {
  Base b;
  const int uid = container_uid();
  ASSERT_GT(uid, 0) << "the Containerfile has no numeric USER uid:gid";
  std::set<std::string> images;
  for (const auto& i : b.kustomization["images"]) images.insert(i["name"].as<std::string>());
  std::set<std::string> claims;  // the StatefulSets' volume claims
  for (const auto& [key, o] : b.objects)
    if (key.first == "StatefulSet")
      for (const auto& t : o["spec"]["volumeClaimTemplates"]) claims.insert(t["metadata"]["name"].as<std::string>());
  for (const auto& [name, pod] : b.pods()) {
    const auto spec = pod["spec"];
    const auto sc = spec["securityContext"];
    EXPECT_TRUE(sc["runAsNonRoot"].as<bool>()) << name;
    EXPECT_EQ(sc["runAsUser"].as<int>(), uid) << name;
    EXPECT_EQ(sc["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault") << name;
    std::set<std::string> volumes;
    for (const auto& v : spec["volumes"]) {
      EXPECT_FALSE(v["hostPath"]) << name << ": a hostPath volume (" << v["name"] << ")";
      volumes.insert(v["name"].as<std::string>());
    }
    for (const auto& c : spec["containers"]) {
      EXPECT_TRUE(images.count(c["image"].as<std::string>())) << name << "'s image is not the base's";
      EXPECT_FALSE(c["securityContext"]["allowPrivilegeEscalation"].as<bool>()) << name;
      EXPECT_EQ(c["securityContext"]["capabilities"]["drop"][0].as<std::string>(), "ALL") << name;
      EXPECT_TRUE(c["resources"]["requests"]["cpu"] && c["resources"]["requests"]["memory"]) << name;
      EXPECT_TRUE(c["resources"]["limits"]["memory"]) << name;
      for (const auto& m : c["volumeMounts"])
        EXPECT_TRUE(volumes.count(m["name"].as<std::string>()) || claims.count(m["name"].as<std::string>()))
            << name << " mounts no volume " << m["name"];
    }
  }
}

// The coordinator's Service, StatefulSet, container ports, arguments, probes and volumes agree with each other, and
// every client of it (workers, the nightly job) reaches it by the Service's name and port with the Secret's token.
TEST(DeployKubernetes, TheCoordinatorAndItsClientsAgreeOnNamesPortsAndTheToken) {
  Base b;
  const auto service = b.get("Service", "lane-tune-coordinator");
  const auto set = b.get("StatefulSet", "lane-tune-coordinator");
  ASSERT_TRUE(service && set);
  EXPECT_EQ(set["spec"]["serviceName"].as<std::string>(), "lane-tune-coordinator");
  const auto pod = set["spec"]["template"];
  for (const auto& l : service["spec"]["selector"])
    EXPECT_EQ(pod["metadata"]["labels"][l.first.as<std::string>()].as<std::string>(), l.second.as<std::string>());
  for (const auto& l : set["spec"]["selector"]["matchLabels"])
    EXPECT_EQ(pod["metadata"]["labels"][l.first.as<std::string>()].as<std::string>(), l.second.as<std::string>());

  const auto c = pod["spec"]["containers"][0];
  std::map<std::string, int> container_ports;
  for (const auto& p : c["ports"]) container_ports[p["name"].as<std::string>()] = p["containerPort"].as<int>();
  std::map<std::string, int> service_ports;
  for (const auto& p : service["spec"]["ports"]) {
    service_ports[p["name"].as<std::string>()] = p["port"].as<int>();
    EXPECT_TRUE(container_ports.count(p["targetPort"].as<std::string>())) << "no container port " << p["targetPort"];
  }
  EXPECT_EQ(container_ports["grpc"], port_of(arg(c, "--listen")));
  EXPECT_EQ(container_ports["metrics"], port_of(arg(c, "--metrics-listen")));
  EXPECT_EQ(pod["metadata"]["annotations"]["prometheus.io/port"].as<std::string>(),
            std::to_string(container_ports["metrics"]));
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"})
    EXPECT_EQ(c[probe]["grpc"]["port"].as<int>(), container_ports["grpc"]) << probe << " is not a gRPC health probe";

  // The database on the volume claim; the token file in the Secret's volume, under the Secret's key.
  const auto db = std::filesystem::path(arg(c, "--db"));
  const auto token = std::filesystem::path(arg(c, "--token-file"));
  std::map<std::string, std::string> mounts;
  for (const auto& m : c["volumeMounts"]) mounts[m["mountPath"].as<std::string>()] = m["name"].as<std::string>();
  EXPECT_EQ(mounts[db.parent_path().string()],
            set["spec"]["volumeClaimTemplates"][0]["metadata"]["name"].as<std::string>());
  EXPECT_TRUE(set["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"]);
  const auto secret = b.get("Secret", "lane-tune");
  ASSERT_TRUE(secret);
  EXPECT_TRUE(secret["stringData"][token.filename().string()]) << "the Secret has no key " << token.filename();
  std::string token_volume;
  for (const auto& v : pod["spec"]["volumes"])
    if (v["secret"] && v["secret"]["secretName"].as<std::string>() == "lane-tune")
      token_volume = v["name"].as<std::string>();
  EXPECT_EQ(mounts[token.parent_path().string()], token_volume);

  // Its clients.
  const std::string address = "lane-tune-coordinator:" + std::to_string(service_ports["grpc"]);
  int clients = 0;
  for (const auto& [name, p] : b.pods())
    for (const auto& container : p["spec"]["containers"])
      for (const auto& e : container["env"]) {
        const auto var = e["name"].as<std::string>();
        if (var == "LT_COORDINATOR") {
          EXPECT_EQ(e["value"].as<std::string>(), address) << name;
          ++clients;
        }
        if (var == "LT_TOKEN") {
          EXPECT_EQ(e["valueFrom"]["secretKeyRef"]["name"].as<std::string>(), "lane-tune") << name;
          EXPECT_TRUE(secret["stringData"][e["valueFrom"]["secretKeyRef"]["key"].as<std::string>()]) << name;
        }
      }
  EXPECT_EQ(clients, 2) << "the workers and the nightly job";
}

// A worker per GPU: each pod asks for one GPU, sees it as index 0, and caches in a volume it can write (no hostPath).
TEST(DeployKubernetes, EachWorkerHasOneGpuAndAWritableCache) {
  Base b;
  const auto workers = b.get("Deployment", "lane-tune-worker");
  ASSERT_TRUE(workers);
  const auto pod = workers["spec"]["template"]["spec"];
  const auto c = pod["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 1);
  EXPECT_EQ(c["resources"]["requests"]["nvidia.com/gpu"].as<int>(), 1);
  EXPECT_EQ(arg(c, "--gpu"), "0");
  std::string cache_volume;
  for (const auto& m : c["volumeMounts"])
    if (m["mountPath"].as<std::string>() == arg(c, "--cache")) cache_volume = m["name"].as<std::string>();
  ASSERT_FALSE(cache_volume.empty()) << "the cache is not on a volume";
  for (const auto& v : pod["volumes"])
    if (v["name"].as<std::string>() == cache_volume) {
      EXPECT_TRUE(v["emptyDir"] || v["persistentVolumeClaim"]);
    }
  EXPECT_TRUE(pod["securityContext"]["fsGroup"]) << "the cache volume is not the user's to write";

  const auto nightly = b.get("CronJob", "lane-tune-nightly");
  ASSERT_TRUE(nightly);
  std::istringstream schedule(nightly["spec"]["schedule"].as<std::string>());
  EXPECT_EQ(std::distance(std::istream_iterator<std::string>(schedule), std::istream_iterator<std::string>()), 5);
  EXPECT_EQ(nightly["spec"]["concurrencyPolicy"].as<std::string>(), "Forbid");
}

// The image: CUDA 13 with CUPTI, a numeric user, volumes, and a build context without build folders.
TEST(DeployContainer, TheImageIsOnCuda13WithCuptiANumericUserAndVolumes) {
  const std::string text = read_text(kDeploy / "Containerfile");
  EXPECT_NE(text.find("ARG CUDA=13-0"), std::string::npos);
  for (const char* package : {"cuda-nvcc-${CUDA}", "cuda-cupti-${CUDA}", "cuda-cupti-dev-${CUDA}"})
    EXPECT_NE(text.find(package), std::string::npos) << package;
  EXPECT_EQ(container_uid(), 10001);
  EXPECT_NE(text.find("\nVOLUME [\"/var/lib/lane-tune\""), std::string::npos);
  const std::string ignore = read_text(std::filesystem::path(LT_SOURCE_DIR) / ".containerignore");
  for (const char* line : {"\n.git\n", "\nbuild\n"}) EXPECT_NE(("\n" + ignore).find(line), std::string::npos) << line;
}

// The units run as the user the sysusers.d file makes; the coordinator says when it is ready.
TEST(DeploySystemd, TheUnitsRunAsTheSysusersUserAndTheCoordinatorNotifies) {
  std::smatch m;
  const std::string users = read_text(kDeploy / "systemd" / "lane-tune.sysusers");
  ASSERT_TRUE(std::regex_search(users, m, std::regex(R"(\nu ([a-z-]+) )"))) << users;
  const std::string user = m[1];
  for (const char* unit :
       {"lane-tune-coordinator.service.in", "lane-tune-worker@.service.in", "lane-tune-nightly.service.in"}) {
    const std::string text = read_text(kDeploy / "systemd" / unit);
    EXPECT_NE(text.find("\nUser=" + user + "\n"), std::string::npos) << unit;
    EXPECT_NE(text.find("\nExecStart=@LT_BINDIR@/lane-tune "), std::string::npos) << unit;
  }
  const std::string coordinator = read_text(kDeploy / "systemd" / "lane-tune-coordinator.service.in");
  EXPECT_NE(coordinator.find("\nType=notify\n"), std::string::npos);
  EXPECT_NE(coordinator.find("--metrics-listen 127.0.0.1:"), std::string::npos) << "metrics beyond loopback";
}

}  // namespace
}  // namespace lt::test
