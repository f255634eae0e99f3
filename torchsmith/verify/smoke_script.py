"""The smoke test program run inside the target environment (kept as text: it runs under the
artifact's own interpreter, which need not have torchsmith). Each test prints one line
``TORCHSMITH_SMOKE {"name", "ok", "detail", "seconds"}``. argv: WORKDIR GPU(auto|yes|no)."""

SMOKE_SCRIPT = r'''
import json, os, sys, time, traceback, warnings
warnings.simplefilter("ignore")
WORK, GPU = sys.argv[1], sys.argv[2]

def report(name, ok, detail, start):
    line = {"name": name, "ok": ok, "detail": detail, "seconds": round(time.time() - start, 3)}
    print("TORCHSMITH_SMOKE " + json.dumps(line), flush=True)

def test(name, fn):
    start = time.time()
    try:
        report(name, True, str(fn() or ""), start)
        return True
    except Exception as exc:
        last = traceback.format_exc().strip().splitlines()[-1]
        report(name, False, f"{type(exc).__name__}: {exc}"[:400] or last, start)
        return False

def do_import():
    global torch
    import torch
    return torch.__version__

def cpu_ops():
    x = torch.arange(6.0).reshape(2, 3)
    assert (x @ x.T).tolist() == [[5.0, 14.0], [14.0, 50.0]], "wrong matmul"
    assert torch.cat([x, x]).sum().item() == 30.0, "wrong cat/sum"
    return "matmul, cat, sum"

def autograd():
    a = torch.randn(8, 8, dtype=torch.float64, requires_grad=True)
    (a ** 2).sum().backward()
    assert torch.allclose(a.grad, 2 * a), "wrong gradient"
    return "d/da sum(a^2) == 2a"

def gpu_matmul():
    a = torch.randn(512, 512, dtype=torch.float64)
    got = (a.cuda() @ a.cuda()).cpu()
    assert torch.allclose(got, a @ a), "GPU matmul differs from CPU"
    return torch.cuda.get_device_name(0)

def cudnn_conv():
    assert torch.backends.cudnn.is_available(), "cuDNN not available"
    x, w = torch.randn(2, 3, 16, 16), torch.randn(4, 3, 3, 3)
    torch.backends.cudnn.allow_tf32 = False
    got = torch.nn.functional.conv2d(x.cuda(), w.cuda()).cpu()
    assert torch.allclose(got, torch.nn.functional.conv2d(x, w), atol=1e-4), "conv differs"
    return f"cuDNN {torch.backends.cudnn.version()}"

def nccl_init():
    import torch.distributed as dist
    store = os.path.join(WORK, "nccl-store")
    if os.path.exists(store):
        os.remove(store)
    dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
    try:
        t = torch.ones(4, device="cuda")
        dist.all_reduce(t)
        torch.cuda.synchronize()
        assert t.sum().item() == 4.0, "all_reduce gave a wrong sum"
        return "NCCL " + ".".join(map(str, torch.cuda.nccl.version()))
    finally:
        dist.destroy_process_group()

CPP = "torch::Tensor twice(torch::Tensor x);"
CU = """
__global__ void twice_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
torch::Tensor twice(torch::Tensor x) {
  auto y = torch::empty_like(x);
  int n = x.numel();
  twice_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
  return y;
}
"""

def jit_extension():
    from torch.utils.cpp_extension import load_inline
    build = os.path.join(WORK, "jit")
    os.makedirs(build, exist_ok=True)
    major, minor = torch.cuda.get_device_capability(0)
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", f"{major}.{minor}")
    mod = load_inline("torchsmith_smoke", cpp_sources=CPP, cuda_sources=CU,
                      functions=["twice"], build_directory=build, verbose=False)
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    assert torch.equal(mod.twice(x), 2 * x), "extension computed a wrong result"
    return f"built for sm_{major}{minor}"

if test("import", do_import):
    test("cpu ops", cpu_ops)
    test("autograd", autograd)
    has_gpu = torch.cuda.is_available()
    if GPU == "yes" and not has_gpu:
        no_gpu = "a GPU was asked for but torch.cuda.is_available() is False"
        report("gpu present", False, no_gpu, time.time())
    if has_gpu and GPU != "no":
        test("cuda matmul", gpu_matmul)
        test("cudnn conv", cudnn_conv)
        test("nccl init", nccl_init)
        test("cpp_extension jit", jit_extension)
'''
