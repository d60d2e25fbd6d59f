"""Dense-prediction networks as MMSegmentation configs define them, in plain torch.

Only what sets the training memory is reproduced: the backbones' shapes (ResNetV1c deep
stem, output stride 8 by dilating stages 3-4 for the "-D8" models; Swin / ConvNeXt / HRNet
from timm with random weights), the decode heads' convolutions at their resolutions and
channel counts, the auxiliary FCN head on stage 3, and the loss on logits resized to the
label size. Read from open-mmlab/mmsegmentation (mmseg/models/decode_heads/{fcn_head,
aspp_head, sep_aspp_head, uper_head, psp_head, ocr_head}.py and configs/_base_/models/
{fcn_r50-d8, deeplabv3_r50-d8, deeplabv3plus_r50-d8, upernet_r50, upernet_swin,
upernet_convnext, fcn_hr18, ocrnet_hr18}.py), 2026-11-30. SyncBN is BatchNorm2d in train
mode (same saved tensors); ConvModule's ReLU is in place, as mmcv's default.

PSPNet is built too, to check the method against MMSeg's own logged memory for it.

Imported by calibration/activations_cpu.py (needs torch, torchvision and timm).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812 (torch's own convention)
import torchvision
from torch import nn

AUX_LOSS_WEIGHT = 0.4  # mmseg configs: auxiliary_head loss_decode loss_weight=0.4


def conv_bn_relu(cin: int, cout: int, k: int = 3, dilation: int = 1, groups: int = 1) -> nn.Module:
    """mmcv ConvModule with norm_cfg=SyncBN, act_cfg=ReLU(inplace=True), bias off."""
    pad = dilation * (k // 2)
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, padding=pad, dilation=dilation, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def sep_conv(cin: int, cout: int, dilation: int) -> nn.Module:
    """mmcv DepthwiseSeparableConvModule: depthwise 3x3 + BN + ReLU, pointwise + BN + ReLU."""
    return nn.Sequential(
        conv_bn_relu(cin, cin, 3, dilation, groups=cin), conv_bn_relu(cin, cout, 1)
    )


class ResNetV1c(nn.Module):
    """mmseg ResNetV1c: deep stem (3x3 convs 32-32-64, stride 2) then max-pool and the
    torchvision bottleneck stages. dilated=True is the "-D8" variant (strides 1,2,1,1,
    dilations 1,1,2,4, contract_dilation): stages 3-4 stay at 1/8."""

    def __init__(self, depth: int, dilated: bool) -> None:
        super().__init__()
        builder = {50: torchvision.models.resnet50, 101: torchvision.models.resnet101}[depth]
        net = builder(weights=None, replace_stride_with_dilation=[False, dilated, dilated])
        self.stem = nn.Sequential(
            conv_bn_relu(3, 32), conv_bn_relu(32, 32), conv_bn_relu(32, 64), net.maxpool
        )
        self.stem[0][0].stride = (2, 2)
        self.layers = nn.ModuleList([net.layer1, net.layer2, net.layer3, net.layer4])
        self.channels = [256, 512, 1024, 2048]

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        x = self.stem(x)
        outs = []
        for layer in self.layers:
            x = layer(x)
            outs.append(x)
        return outs


class TimmBackbone(nn.Module):
    """A timm backbone's multi-scale features (NCHW), random weights."""

    def __init__(self, name: str, img_size: tuple[int, int] | None = None, **kw: object) -> None:
        super().__init__()
        import timm

        if img_size is not None:
            kw["img_size"] = img_size
        self.net = timm.create_model(name, pretrained=False, features_only=True, **kw)
        self.channels = self.net.feature_info.channels()
        # timm's Swin returns NHWC maps; mmseg's returns NCHW (a permute, no extra memory)
        self.nhwc = name.startswith("swin")

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        feats = list(self.net(x))
        return [f.permute(0, 3, 1, 2) for f in feats] if self.nhwc else feats


class FCNHead(nn.Module):
    """mmseg FCNHead: num_convs 3x3 convs, optional concat of the input, 1x1 classifier
    (dropout 0.1 before it, as BaseDecodeHead)."""

    def __init__(
        self, cin: int, ch: int, classes: int, num_convs: int = 2, concat: bool = True, k: int = 3
    ) -> None:
        super().__init__()
        convs = [conv_bn_relu(cin if i == 0 else ch, ch, k) for i in range(num_convs)]
        self.convs = nn.Sequential(*convs)
        self.cat = conv_bn_relu(cin + ch, ch) if concat else None
        self.cls = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(ch, classes, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.convs(x)
        if self.cat is not None:
            y = self.cat(torch.cat([x, y], 1))
        return self.cls(y)


class ASPPHead(nn.Module):
    """mmseg ASPPHead (DeepLabV3): image pooling + 1x1 + three dilated 3x3 (12, 24, 36) at
    512 channels, concat, 3x3 bottleneck. separable=True is DeepLabV3+'s
    DepthwiseSeparableASPPHead: separable branches, and a decoder that fuses the 1/4
    stage-1 features (48 channels) through two separable 3x3 convs at 1/4."""

    def __init__(self, cin: int, ch: int, classes: int, separable: bool = False) -> None:
        super().__init__()
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), conv_bn_relu(cin, ch, 1))
        branches = [conv_bn_relu(cin, ch, 1)]
        for d in (12, 24, 36):
            branches.append(sep_conv(cin, ch, d) if separable else conv_bn_relu(cin, ch, 3, d))
        self.branches = nn.ModuleList(branches)
        self.bottleneck = conv_bn_relu(5 * ch, ch)
        self.separable = separable
        if separable:
            self.c1 = conv_bn_relu(256, 48, 1)
            self.sep_bottleneck = nn.Sequential(sep_conv(ch + 48, ch, 1), sep_conv(ch, ch, 1))
        self.cls = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(ch, classes, 1))

    def forward(self, feats: list[torch.Tensor]) -> torch.Tensor:
        x = feats[-1]
        pooled = F.interpolate(self.pool(x), size=x.shape[2:], mode="bilinear")
        y = self.bottleneck(torch.cat([pooled, *[b(x) for b in self.branches]], 1))
        if self.separable:
            c1 = self.c1(feats[0])
            y = F.interpolate(y, size=c1.shape[2:], mode="bilinear")
            y = self.sep_bottleneck(torch.cat([y, c1], 1))
        return self.cls(y)


class PPM(nn.Module):
    """Pyramid pooling (PSPNet / UPerNet): pooled to 1, 2, 3, 6, 1x1 conv, upsampled."""

    def __init__(self, cin: int, ch: int) -> None:
        super().__init__()
        self.stages = nn.ModuleList(
            nn.Sequential(nn.AdaptiveAvgPool2d(s), conv_bn_relu(cin, ch, 1)) for s in (1, 2, 3, 6)
        )

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        return [F.interpolate(s(x), size=x.shape[2:], mode="bilinear") for s in self.stages]


class PSPHead(nn.Module):
    """mmseg PSPHead: PPM (512 channels per scale) on the last stage, concat with it, 3x3
    bottleneck to 512, classifier."""

    def __init__(self, cin: int, ch: int, classes: int) -> None:
        super().__init__()
        self.ppm = PPM(cin, ch)
        self.bottleneck = conv_bn_relu(cin + 4 * ch, ch)
        self.cls = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(ch, classes, 1))

    def forward(self, feats: list[torch.Tensor]) -> torch.Tensor:
        x = feats[-1]
        return self.cls(self.bottleneck(torch.cat([x, *self.ppm(x)], 1)))


class UPerHead(nn.Module):
    """mmseg UPerHead (UPerNet, arXiv 1807.10221): PPM on the last stage, FPN laterals
    (1x1) and 3x3 FPN convs at 512 channels on every level, all levels upsampled to 1/4
    and concatenated (4 x 512), 3x3 fpn_bottleneck at 1/4, classifier."""

    def __init__(self, in_channels: list[int], ch: int, classes: int) -> None:
        super().__init__()
        self.ppm = PPM(in_channels[-1], ch)
        self.ppm_bottleneck = conv_bn_relu(in_channels[-1] + 4 * ch, ch)
        self.laterals = nn.ModuleList(conv_bn_relu(c, ch, 1) for c in in_channels[:-1])
        self.fpn_convs = nn.ModuleList(conv_bn_relu(ch, ch) for _ in in_channels[:-1])
        self.fpn_bottleneck = conv_bn_relu(len(in_channels) * ch, ch)
        self.cls = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(ch, classes, 1))

    def forward(self, feats: list[torch.Tensor]) -> torch.Tensor:
        top = feats[-1]
        laterals = [lat(f) for lat, f in zip(self.laterals, feats[:-1], strict=True)]
        laterals.append(self.ppm_bottleneck(torch.cat([top, *self.ppm(top)], 1)))
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(
                laterals[i], size=laterals[i - 1].shape[2:], mode="bilinear"
            )
        outs = [conv(lat) for conv, lat in zip(self.fpn_convs, laterals[:-1], strict=True)]
        outs.append(laterals[-1])
        size = outs[0].shape[2:]
        outs = [outs[0]] + [F.interpolate(o, size=size, mode="bilinear") for o in outs[1:]]
        return self.cls(self.fpn_bottleneck(torch.cat(outs, 1)))


class ResizeConcat(nn.Module):
    """mmseg input_transform='resize_concat' (HRNetV2): every branch upsampled to the
    highest resolution (1/4) and concatenated."""

    def forward(self, feats: list[torch.Tensor]) -> torch.Tensor:
        size = feats[0].shape[2:]
        return torch.cat(
            [feats[0]] + [F.interpolate(f, size=size, mode="bilinear") for f in feats[1:]], 1
        )


class OCRHead(nn.Module):
    """mmseg OCRHead (OCRNet, arXiv 1909.11065): 3x3 bottleneck to 512, spatial gather of
    the soft object regions (from the preceding FCN head's logits) and the object-context
    attention block (key/query/value projections at 256 channels, softmax over classes,
    concat + 1x1 fuse), classifier."""

    def __init__(self, cin: int, classes: int, ch: int = 512, ocr_ch: int = 256) -> None:
        super().__init__()
        self.bottleneck = conv_bn_relu(cin, ch)
        self.query = nn.Sequential(conv_bn_relu(ch, ocr_ch, 1), conv_bn_relu(ocr_ch, ocr_ch, 1))
        self.key = nn.Sequential(conv_bn_relu(ch, ocr_ch, 1), conv_bn_relu(ocr_ch, ocr_ch, 1))
        self.value = conv_bn_relu(ch, ocr_ch, 1)
        self.out_project = conv_bn_relu(ocr_ch, ch, 1)
        self.fuse = conv_bn_relu(2 * ch, ch, 1)
        self.cls = nn.Sequential(nn.Dropout2d(0.1), nn.Conv2d(ch, classes, 1))

    def forward(self, x: torch.Tensor, prev_logits: torch.Tensor) -> torch.Tensor:
        feats = self.bottleneck(x)
        b, c, h, w = feats.shape
        probs = F.softmax(prev_logits.flatten(2), dim=2)  # B x K x HW
        context = torch.bmm(probs, feats.flatten(2).transpose(1, 2))  # B x K x C
        context = context.transpose(1, 2).unsqueeze(3)  # B x C x K x 1
        q = self.query(feats).flatten(2).transpose(1, 2)  # B x HW x C'
        k = self.key(context).flatten(2)  # B x C' x K
        v = self.value(context).flatten(2).transpose(1, 2)  # B x K x C'
        sim = F.softmax(torch.bmm(q, k) * k.shape[1] ** -0.5, dim=-1)
        ctx = torch.bmm(sim, v).transpose(1, 2).reshape(b, -1, h, w)
        ctx = self.out_project(ctx)
        return self.cls(self.fuse(torch.cat([ctx, feats], 1)))


class Segmentor(nn.Module):
    """EncoderDecoder / CascadeEncoderDecoder: backbone, decode head(s), auxiliary FCN
    head; returns the training loss on logits resized to the label size."""

    def __init__(self, backbone: nn.Module, head: str, classes: int, aux_stage: int | None) -> None:
        super().__init__()
        self.backbone = backbone
        chans = backbone.channels
        self.head_kind = head
        if head == "fcn":
            self.head = FCNHead(chans[-1], 512, classes)
        elif head in ("aspp", "sep_aspp"):
            self.head = ASPPHead(chans[-1], 512, classes, separable=head == "sep_aspp")
        elif head == "psp":
            self.head = PSPHead(chans[-1], 512, classes)
        elif head == "uper":
            self.head = UPerHead(chans, 512, classes)
        elif head in ("hr_fcn", "hr_ocr"):
            self.concat = ResizeConcat()
            total = sum(chans)
            # fcn_hr18: FCNHead channels=sum(in_channels), num_convs=1, kernel 1, no concat
            self.head = FCNHead(total, total, classes, num_convs=1, concat=False, k=1)
            if head == "hr_ocr":
                self.ocr = OCRHead(total, classes)
        self.aux = (
            FCNHead(chans[aux_stage], 256, classes, num_convs=1, concat=False)
            if aux_stage is not None
            else None
        )

    def forward(self, images: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        feats = self.backbone(images)
        size = labels.shape[1:]

        def loss(logits: torch.Tensor) -> torch.Tensor:
            up = F.interpolate(logits, size=size, mode="bilinear")
            return F.cross_entropy(up, labels, ignore_index=255)

        if self.head_kind in ("hr_fcn", "hr_ocr"):
            x = self.concat(feats)
            fcn_logits = self.head(x)
            if self.head_kind == "hr_fcn":
                return loss(fcn_logits)
            # ocrnet_hr18: FCN head loss 0.4, OCR head 1.0
            return AUX_LOSS_WEIGHT * loss(fcn_logits) + loss(self.ocr(x, fcn_logits))
        total = loss(self.head(feats[-1] if self.head_kind == "fcn" else feats))
        if self.aux is not None:
            total = total + AUX_LOSS_WEIGHT * loss(self.aux(feats[2]))
        return total


class HRNetBackbone(TimmBackbone):
    """HRNetV2 (timm hrnet_w18 / w48, feature_location=''): the four branch outputs at
    1/4..1/32 (18/36/72/144 or 48/96/192/384 channels); the stem output is dropped."""

    def __init__(self, name: str) -> None:
        super().__init__(name, feature_location="", out_indices=(1, 2, 3, 4))


def build_segmentor(backbone: str, head: str, classes: int) -> Segmentor:
    """backbone: r50 / r101 (D8 for fcn/aspp heads, plain for uper), a timm name, or
    hrnet_w18 / hrnet_w48."""
    if backbone in ("r50", "r101"):
        bb: nn.Module = ResNetV1c(int(backbone[1:]), dilated=head != "uper")
        aux: int | None = 2
    elif backbone.startswith("hrnet"):
        bb, aux = HRNetBackbone(backbone), None
    else:
        kw: dict = {}
        if backbone.startswith("swin"):
            kw = {"img_size": (224, 448), "drop_path_rate": 0.3}
        bb, aux = TimmBackbone(backbone, **kw), 2
    return Segmentor(bb, head, classes, aux)
